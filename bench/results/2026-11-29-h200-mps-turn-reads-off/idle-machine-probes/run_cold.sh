cd .probe/spin && gcc -O2 -shared -fPIC -o libspinwait.so spinwait.c
echo "== idle machine"; python3 coldbench.py
echo "== 15 yield spinners"
for k in $(seq 1 15); do python3 spinbench.py spin pyyield & done
sleep 1; python3 coldbench.py; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null

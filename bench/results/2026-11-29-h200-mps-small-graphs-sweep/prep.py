"""Prepare small graphs (HDF5 via dbfs convert/generate) and their reference BFS levels for the GPU sweep."""
import os, sys, random, subprocess, json, collections
import numpy as np, h5py
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fam import *
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'g')
os.makedirs(D, exist_ok=True)
PY = sys.executable
rng = random.Random(7)
meta = {}

def sh(cmd):
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if p.returncode: raise SystemExit(cmd + '\n' + p.stderr)

def from_edges(name, edges, undirected, ids='keep', nverts=None, roots=()):
    txt = f'{D}/{name}.txt'
    with open(txt, 'w') as f:
        for u, v in edges: f.write(f'{u} {v}\n')
    cmd = f'{PY} -m dbfs convert {txt} --out {D}/{name}.h5 --force' + (' --undirected' if undirected else '') + f' --ids {ids}'
    if nverts: cmd += f' --n-vertices {nverts}'
    sh(cmd); os.remove(txt)
    meta[name] = dict(roots=list(roots), undirected=undirected)

def generated(name, args, roots=()):
    sh(f'{PY} -m dbfs generate {args} --out {D}/{name}.h5 --force --backend cpu')
    meta[name] = dict(roots=list(roots), undirected=True)

generated('kron12', '--scale 12 --edgefactor 16')
generated('kron14e4', '--scale 14 --edgefactor 4')
generated('lat64r', '--lattice 64x64 --remove-fraction 0.3')
generated('lat3d', '--lattice 12x12x12 --no-scramble')
from_edges('path3000', path(3000), True, roots=[0, 1500, 2999])
from_edges('path3000d', path(3000), False, roots=[0, 1500])
from_edges('star5000', star(5000), True, roots=[0, 4999])
from_edges('star5000d', star(5000), False, roots=[0, 4999])
from_edges('bipchunks', bip(10, 30) + bip(25, 3, off=40) + path(300, off=100), True, roots=[0, 45, 399])
from_edges('iso', er(rng, 50, 100), True, nverts=97, roots=[96, 60, 0])
from_edges('erd', add_noise(rng, er(rng, 2000, 8000), 2000, loops=50, dups=300), False, roots=[0, 17, 1999])
from_edges('plaw', powerlaw(rng, 20000, 120000), True, roots=[0, 19999])
e, ids = relabel(rng, tree(rng, 3000) + er(rng, 3000, 3000), 3000, big=True)
from_edges('bigids', e, False, ids='renumber', roots=[ids[0], ids[2999]])
from_edges('small3', path(3), True, roots=[0, 2])

# reference levels per (graph, root) in the file's vertex ids (original ids), by a plain BFS
for name, m in meta.items():
    f = h5py.File(f'{D}/{name}.h5', 'r'); src = f['src'][:].astype(np.int64); dst = f['dst'][:].astype(np.int64)
    attrs = dict(f.attrs); f.close()
    m['directed'] = bool(attrs.get('directed', False)); m['n'] = int(attrs['n_vertices'])
print(json.dumps(meta, indent=0))
json.dump(meta, open(f'{D}/meta.json', 'w'))

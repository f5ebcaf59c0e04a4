"""GPU sweep: the main command on small graphs at 2-16 PEs under MPS, every search validated; --root runs
compared with a plain BFS. Usage: run.py OUTDIR SECONDS"""
import sys, os, json, time, random, subprocess, collections
import numpy as np, h5py
G = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'g')
out, budget = sys.argv[1], float(sys.argv[2])
meta = json.load(open(f'{G}/meta.json'))
log = open(f'{out}/sweep.log', 'a')
rng = random.Random(11)
t0 = time.time()
stats = collections.Counter()

def ref_levels(name, root):
    f = h5py.File(f'{G}/{name}.h5', 'r'); src = f['src'][:].astype(np.int64); dst = f['dst'][:].astype(np.int64); f.close()
    n = meta[name]['n']
    if meta[name]['undirected']:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    order = np.argsort(src, kind='stable'); s, d = src[order], dst[order]
    ptr = np.searchsorted(s, np.arange(n + 1))
    lvl = np.full(n, -1, np.int64); lvl[root] = 0; front = np.array([root]); k = 0
    while front.size:
        k += 1
        nb = np.concatenate([d[ptr[u]:ptr[u + 1]] for u in front]) if front.size else np.zeros(0, np.int64)
        nb = np.unique(nb); nb = nb[lvl[nb] < 0]; lvl[nb] = k; front = nb
    return lvl, src, dst

GRIDS = {2: [None, '1x2'], 3: [None, '1x3'], 4: [None, '2x2', '1x4'], 6: [None, '2x3', '3x2'], 8: [None, '4x2', '2x4'],
         16: [None, '4x4', '8x2', '2x8']}
OPTS = ['', '--direction topdown', '--alpha 1e-6 --beta 1e6', '--alpha 1e-6 --beta 1e-6', '--encoding list',
        '--encoding bitmap', '--row-copy off --alpha 1e-6', '--alpha 0.5 --beta 2']

def runs():
    names = list(meta)
    # every graph once on nvshmem, the grids and options in turn, then random
    shapes = [(4, '2x2'), (6, '2x3'), (6, '3x2'), (8, '4x2'), (3, None), (16, '4x4'), (2, '1x2'), (8, '2x4'),
              (16, None), (4, None)]
    for k, name in enumerate(names):
        p, grid = shapes[k % len(shapes)]
        yield name, p, grid, 'nvshmem', OPTS[k % len(OPTS)]
    while True:
        p = rng.choice([2, 3, 4, 6, 8, 16, 16])
        yield rng.choice(names), p, rng.choice(GRIDS[p]), rng.choice(['nvshmem', 'nvshmem', 'mpi']), rng.choice(OPTS)

for name, p, grid, comm, opts in runs():
    if time.time() - t0 > budget: break
    m = meta[name]
    if '--row-copy off' in opts and m['directed']: opts = opts.replace('--row-copy off', '')
    single = rng.random() < 0.5 and m['roots']
    root = rng.choice(m['roots']) if single else None
    res = f'{out}/res.h5'
    if os.path.exists(res): os.remove(res)
    cmd = (f"timeout -s KILL 90 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n {p} python3 -P -m dbfs --graph {G}/{name}.h5"
           f" --backend gpu --comm {comm} {'--grid ' + grid if grid else ''} {opts}"
           + (f" --root {root} --save-result {res}" if single else " --roots 16") + f" --json {out}/run.json")
    started = time.time()
    proc = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    took = time.time() - started
    verdict = 'ok'
    if proc.returncode != 0:
        verdict = f'rc={proc.returncode}: ' + proc.stderr.strip()[-1500:]
    else:
        j = json.load(open(f'{out}/run.json'))
        bad = [s['root'] for s in j['searches'] if not s.get('validated')]
        if bad: verdict = f'not validated: {bad}'
        elif comm == 'nvshmem' and j['level_launch'] != 'device': verdict = f"levels launched by the {j['level_launch']}"
        elif single and name != 'bigids':
            lvl, src, dst = ref_levels(name, root)
            f = h5py.File(res, 'r'); V = f['vertex'][:]; L = f['level'][:]; P = f['parent'][:]; f.close()
            got = np.full(m['n'], -2, np.int64); got[V] = L
            if not np.array_equal(got, lvl): verdict = f'levels differ at {np.flatnonzero(got != lvl)[:5].tolist()}'
            else:
                par = np.full(m['n'], -2, np.int64); par[V] = P
                reached = np.flatnonzero((lvl > 0))
                edges = set(zip(src.tolist(), dst.tolist()))
                wrong = [int(v) for v in reached if (int(par[v]), int(v)) not in edges or lvl[par[v]] != lvl[v] - 1]
                if wrong: verdict = f'parents wrong at {wrong[:5]}'
    stats['runs'] += 1; stats['ok' if verdict == 'ok' else 'fail'] += 1
    log.write(f'{took:6.1f}s {verdict[:3000]} :: {cmd}\n'); log.flush()
    if verdict != 'ok': print('FAIL', cmd, '\n   ', verdict[:800], flush=True)
print(dict(stats), f'{time.time() - t0:.0f} s', flush=True)

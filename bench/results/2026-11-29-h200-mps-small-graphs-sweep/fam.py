import random
def path(n, off=0): return [(i+off, i+1+off) for i in range(n-1)]
def star(n, hub=0): return [(hub, i) for i in range(n) if i != hub]
def instar(n, hub=0): return [(i, hub) for i in range(n) if i != hub]
def cycle(n): return [(i, (i+1) % n) for i in range(n)]
def er(rng, n, m): return [(rng.randrange(n), rng.randrange(n)) for _ in range(m)]
def bip(a, b, off=0): return [(off+i, off+a+j) for i in range(a) for j in range(b)]
def tree(rng, n): return [(rng.randrange(i), i) for i in range(1, n)]
def complete(n): return [(i, j) for i in range(n) for j in range(n) if i != j]
def grid2(r, c): 
    e = []
    for i in range(r):
        for j in range(c):
            v = i*c+j
            if j+1 < c: e.append((v, v+1))
            if i+1 < r: e.append((v, v+c))
    return e
def powerlaw(rng, n, m):
    w = [1.0/(i+1)**1.2 for i in range(n)]
    s = rng.choices(range(n), weights=w, k=m); d = rng.choices(range(n), weights=w, k=m)
    return list(zip(s, d))
def add_noise(rng, e, n, loops=0, dups=0):
    e = list(e)
    for _ in range(loops):
        v = rng.randrange(n); e.append((v, v))
    for _ in range(dups):
        if e: e.append(rng.choice(e))
    rng.shuffle(e)
    return e
def relabel(rng, e, n, big=False):
    if big: ids = sorted(rng.sample(range(10**12), n)) if rng.random()<0.5 else [i*1000003+7 for i in range(n)]
    else: ids = list(range(n))
    rng.shuffle(ids)
    return [(ids[u], ids[v]) for u, v in e], ids

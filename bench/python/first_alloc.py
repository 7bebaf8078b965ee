"""Times a fresh process's first device allocations on GPU 0, by variant, through
libcuda by ctypes (no CUDA toolkit needed): the source of the numbers in cust's
`alloc_unpooled` docs. Run `python3 bench/python/first_alloc.py`; each variant runs
in four fresh processes and prints milliseconds per driver call:

- async / async_nomemset: cuMemAllocAsync (the stream-ordered pool) + cuMemsetD8Async;
- sync / sync_nomemset: cuMemAlloc (outside the pool);
- warm_*: one allocation first (256 bytes or all the bytes from the pool, or 256 bytes by
  cuMemAlloc), then the four of `async`.

The sizes are a 1920x1080 render's device buffers (escape times, |z|^2, colours, the
colour table). "second_round" repeats the four through the pool in the same process.
"""
import ctypes, sys, time, subprocess, json, os
def child(variant):
    cu = ctypes.CDLL("libcuda.so.1")
    def ck(r, what):
        if r != 0: raise SystemExit(f"{what}: CUresult {r}")
    t = {}
    def tic(): return time.perf_counter()
    s = tic(); ck(cu.cuInit(0), "init"); t["init"] = tic() - s
    dev = ctypes.c_int(); ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "dev")
    ctx = ctypes.c_void_p()
    s = tic(); ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx"); ck(cu.cuCtxSetCurrent(ctx), "set"); t["ctx"] = tic() - s
    st = ctypes.c_void_p()
    s = tic(); ck(cu.cuStreamCreate(ctypes.byref(st), 1), "stream"); t["stream"] = tic() - s
    free = ctypes.c_size_t(); tot = ctypes.c_size_t()
    s = tic(); ck(cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(tot)), "info"); t["meminfo"] = tic() - s
    sizes = [1920*1080*4, 1920*1080*4, 1920*1080*3, 4096*4]
    if variant.startswith("warm"):
        p = ctypes.c_uint64()
        s = tic()
        if variant == "warm_async":
            ck(cu.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(256), st), "wa"); ck(cu.cuMemFreeAsync(p, st), "wf")
        elif variant == "warm_async_big":
            ck(cu.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(sum(sizes)), st), "wa"); ck(cu.cuMemFreeAsync(p, st), "wf")
        else:
            ck(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(256)), "wa"); ck(cu.cuMemFree_v2(p), "wf")
        ck(cu.cuStreamSynchronize(st), "sync"); t["warm"] = tic() - s
    ptrs = []
    s0 = tic()
    for i, n in enumerate(sizes):
        p = ctypes.c_uint64()
        s = tic()
        if variant in ("sync", "sync_nomemset"):
            ck(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)), "alloc")
        else:
            ck(cu.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(n), st), "allocasync")
        t[f"alloc{i}"] = tic() - s
        if not variant.endswith("nomemset"):
            s = tic(); ck(cu.cuMemsetD8Async(p, ctypes.c_ubyte(0), ctypes.c_size_t(n), st), "memset"); t[f"memset{i}"] = tic() - s
        ptrs.append(p)
    s = tic(); ck(cu.cuStreamSynchronize(st), "sync"); t["sync"] = tic() - s
    t["buffers_total"] = tic() - s0
    # a second round in the same process
    s0 = tic()
    for n in sizes:
        p = ctypes.c_uint64()
        ck(cu.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(n), st), "allocasync2")
        ck(cu.cuMemsetD8Async(p, ctypes.c_ubyte(0), ctypes.c_size_t(n), st), "memset2")
    ck(cu.cuStreamSynchronize(st), "sync2"); t["second_round"] = tic() - s0
    print(json.dumps({k: round(v * 1e3, 3) for k, v in t.items()}))
if len(sys.argv) > 1:
    child(sys.argv[1]); sys.exit(0)
variants = ["async", "async_nomemset", "sync", "sync_nomemset", "warm_async", "warm_async_big", "warm_sync"]
res = {v: [] for v in variants}
for r in range(4):
    for v in variants:
        out = subprocess.run([sys.executable, __file__, v], capture_output=True, text=True)
        if out.returncode != 0: print(v, out.stderr[-500:]); continue
        res[v].append(json.loads(out.stdout))
for v in variants:
    print(v)
    for d in res[v]: print("  ", d)

// CUDA C twins of ferrocuda's vector kernels (kernels/src/{vector,reduce,scan,gemm}.rs):
// the same algorithms and launch shapes, written as a careful CUDA C programmer would, for
// `ferrocuda bench`, which compiles this file at run time with
// `nvcc -O3 -arch=sm_XY -cubin` and times both versions in the same run.
//
// Rounding matches the Rust kernels: products and sums that Rust rounds separately use
// __fmul_rn / __fadd_rn (nvcc would otherwise contract them to FMAs), and the fused ones use
// fma(), so copy, scale, add, triad and axpy give the same bits as the Rust kernels.
//
// Every entry point is extern "C" (unmangled names `cu_*`). Slices are (pointer, length).

#include <cstddef>
#include <cstdint>

#define FULL_MASK 0xffffffffu

// ---- element traits: 16-byte vectors, rounding helpers, limits -------------------------

template <typename T> struct Pack;
template <> struct Pack<float> { typedef float4 type; enum { lanes = 4 }; };
template <> struct Pack<double> { typedef double2 type; enum { lanes = 2 }; };
template <> struct Pack<unsigned> { typedef uint4 type; enum { lanes = 4 }; };

__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ unsigned add_rn(unsigned a, unsigned b) { return a + b; }

struct SumOp {
    template <typename T> static __device__ __forceinline__ T identity() { return T(0); }
    template <typename T> static __device__ __forceinline__ T f(T a, T b) { return add_rn(a, b); }
};
struct MinOp {
    template <typename T> static __device__ __forceinline__ T identity();
    static __device__ __forceinline__ float f(float a, float b) { return fminf(a, b); }
    static __device__ __forceinline__ double f(double a, double b) { return fmin(a, b); }
    static __device__ __forceinline__ unsigned f(unsigned a, unsigned b) { return min(a, b); }
};
template <> __device__ __forceinline__ float MinOp::identity<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double MinOp::identity<double>() { return __longlong_as_double(0x7ff0000000000000ll); }
template <> __device__ __forceinline__ unsigned MinOp::identity<unsigned>() { return 0xffffffffu; }
struct MaxOp {
    template <typename T> static __device__ __forceinline__ T identity();
    static __device__ __forceinline__ float f(float a, float b) { return fmaxf(a, b); }
    static __device__ __forceinline__ double f(double a, double b) { return fmax(a, b); }
    static __device__ __forceinline__ unsigned f(unsigned a, unsigned b) { return max(a, b); }
};
template <> __device__ __forceinline__ float MaxOp::identity<float>() { return __int_as_float(0xff800000); }
template <> __device__ __forceinline__ double MaxOp::identity<double>() { return __longlong_as_double(0xfff0000000000000ll); }
template <> __device__ __forceinline__ unsigned MaxOp::identity<unsigned>() { return 0u; }

// ---- STREAM kernels and axpy: grid-stride over 16-byte packs, then the tail ------------

template <typename T, typename F>
__device__ __forceinline__ void map1(size_t n, const T* __restrict__ a, T* __restrict__ out, F f) {
    typedef typename Pack<T>::type V;
    const int L = Pack<T>::lanes;
    size_t packs = n / L;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t p = i; p < packs; p += stride) {
        V x = reinterpret_cast<const V*>(a)[p];
        T* xs = reinterpret_cast<T*>(&x);
#pragma unroll
        for (int l = 0; l < L; ++l) xs[l] = f(xs[l]);
        reinterpret_cast<V*>(out)[p] = x;
    }
    size_t t = packs * L + i;
    if (t < n) out[t] = f(a[t]);
}

// `b` and `out` may be the same buffer (axpy), so they are not __restrict__.
template <typename T, typename F>
__device__ __forceinline__ void map2(size_t n, const T* __restrict__ a, const T* b, T* out, F f) {
    typedef typename Pack<T>::type V;
    const int L = Pack<T>::lanes;
    size_t packs = n / L;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t p = i; p < packs; p += stride) {
        V x = reinterpret_cast<const V*>(a)[p];
        V y = reinterpret_cast<const V*>(b)[p];
        T* xs = reinterpret_cast<T*>(&x);
        T* ys = reinterpret_cast<T*>(&y);
#pragma unroll
        for (int l = 0; l < L; ++l) xs[l] = f(xs[l], ys[l]);
        reinterpret_cast<V*>(out)[p] = x;
    }
    size_t t = packs * L + i;
    if (t < n) out[t] = f(a[t], b[t]);
}

#define STREAM_KERNELS(T, S)                                                                   \
    extern "C" __global__ void cu_copy_##S(const T* __restrict__ a, T* __restrict__ c, size_t n) { \
        map1(n, a, c, [](T x) { return x; });                                                  \
    }                                                                                          \
    extern "C" __global__ void cu_scale_##S(const T* __restrict__ c, T q, T* __restrict__ b, size_t n) { \
        map1(n, c, b, [q](T x) { return mul_rn(q, x); });                                      \
    }                                                                                          \
    extern "C" __global__ void cu_add_##S(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, size_t n) { \
        map2(n, a, b, c, [](T x, T y) { return add_rn(x, y); });                               \
    }                                                                                          \
    extern "C" __global__ void cu_triad_##S(const T* __restrict__ b, const T* __restrict__ c, T q, T* __restrict__ a, size_t n) { \
        map2(n, b, c, a, [q](T x, T y) { return add_rn(x, mul_rn(q, y)); });                   \
    }                                                                                          \
    extern "C" __global__ void cu_axpy_##S(T alpha, const T* __restrict__ x, T* y, size_t n) { \
        map2(n, x, y, y, [alpha](T xi, T yi) { return fma(alpha, xi, yi); });                  \
    }

STREAM_KERNELS(float, f32)
STREAM_KERNELS(double, f64)

// ---- reductions: chunk per block, warp shuffles, one shared slot per warp ---------------

template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v) {
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) v = Op::f(v, __shfl_xor_sync(FULL_MASK, v, m));
    return v;
}

// Thread 0 gets the block's result.
template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v) {
    __shared__ unsigned long long raw[32];
    T* slots = reinterpret_cast<T*>(raw);
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    v = warp_reduce<T, Op>(v);
    if (lane == 0) slots[warp] = v;
    __syncthreads();
    T r = Op::template identity<T>();
    if (warp == 0) {
        if (lane < warps) r = slots[lane];
        r = warp_reduce<T, Op>(r);
    }
    __syncthreads();
    return r;
}

__device__ __forceinline__ void chunk_bounds(size_t n, size_t chunk, size_t* start, size_t* end) {
    size_t s = (size_t)blockIdx.x * chunk;
    if (s > n) s = n;
    size_t e = s + chunk;
    if (e > n) e = n;
    *start = s;
    *end = e;
}

template <typename T, typename Op>
__device__ __forceinline__ void reduce_chunk(const T* __restrict__ x, size_t n, size_t chunk, T* __restrict__ out) {
    typedef typename Pack<T>::type V;
    const int L = Pack<T>::lanes;
    size_t start, end;
    chunk_bounds(n, chunk, &start, &end);
    const V* p = reinterpret_cast<const V*>(x) + start / L;
    size_t packs = (end - start) / L;
    size_t step = blockDim.x;
    T acc = Op::template identity<T>();
    size_t i = threadIdx.x;
    // Four 16-byte loads in flight per thread, as in the Rust kernel.
    for (; i + 3 * step < packs; i += 4 * step) {
        V u[4] = {p[i], p[i + step], p[i + 2 * step], p[i + 3 * step]};
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const T* us = reinterpret_cast<const T*>(&u[q]);
#pragma unroll
            for (int l = 0; l < L; ++l) acc = Op::f(acc, us[l]);
        }
    }
    for (; i < packs; i += step) {
        V u = p[i];
        const T* us = reinterpret_cast<const T*>(&u);
#pragma unroll
        for (int l = 0; l < L; ++l) acc = Op::f(acc, us[l]);
    }
    for (size_t t = start + packs * L + threadIdx.x; t < end; t += step) acc = Op::f(acc, x[t]);
    T r = block_reduce<T, Op>(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = r;
}

#define REDUCE_KERNEL(NAME, T, OP)                                                             \
    extern "C" __global__ void NAME(const T* __restrict__ x, size_t n, size_t chunk, T* __restrict__ out) { \
        reduce_chunk<T, OP>(x, n, chunk, out);                                                 \
    }

REDUCE_KERNEL(cu_reduce_sum_f32, float, SumOp)
REDUCE_KERNEL(cu_reduce_min_f32, float, MinOp)
REDUCE_KERNEL(cu_reduce_max_f32, float, MaxOp)
REDUCE_KERNEL(cu_reduce_sum_f64, double, SumOp)
REDUCE_KERNEL(cu_reduce_min_f64, double, MinOp)
REDUCE_KERNEL(cu_reduce_max_f64, double, MaxOp)
REDUCE_KERNEL(cu_reduce_sum_u32, unsigned, SumOp)
REDUCE_KERNEL(cu_reduce_min_u32, unsigned, MinOp)
REDUCE_KERNEL(cu_reduce_max_u32, unsigned, MaxOp)

template <typename T>
__device__ __forceinline__ void dot_chunk(const T* __restrict__ a, const T* __restrict__ b, size_t n, size_t chunk, T* __restrict__ out) {
    typedef typename Pack<T>::type V;
    const int L = Pack<T>::lanes;
    size_t start, end;
    chunk_bounds(n, chunk, &start, &end);
    const V* pa = reinterpret_cast<const V*>(a) + start / L;
    const V* pb = reinterpret_cast<const V*>(b) + start / L;
    size_t packs = (end - start) / L;
    T acc = T(0);
    for (size_t i = threadIdx.x; i < packs; i += blockDim.x) {
        V u = pa[i], w = pb[i];
        const T* us = reinterpret_cast<const T*>(&u);
        const T* ws = reinterpret_cast<const T*>(&w);
#pragma unroll
        for (int l = 0; l < L; ++l) acc = fma(us[l], ws[l], acc);
    }
    size_t t = start + packs * L + threadIdx.x;
    if (t < end) acc = fma(a[t], b[t], acc);
    T r = block_reduce<T, SumOp>(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = r;
}

extern "C" __global__ void cu_dot_f32(const float* __restrict__ a, const float* __restrict__ b, size_t n, size_t chunk, float* __restrict__ out) {
    dot_chunk<float>(a, b, n, chunk, out);
}
extern "C" __global__ void cu_dot_f64(const double* __restrict__ a, const double* __restrict__ b, size_t n, size_t chunk, double* __restrict__ out) {
    dot_chunk<double>(a, b, n, chunk, out);
}

// ---- scans: single pass with decoupled look-back (Merrill & Garland 2016) -------------
//
// The previous design of kernels/src/scan.rs (before its CUB-shaped rewrite): one tile of
// blockDim.x threads x SCAN_ITEMS elements per block (the host launches 128 x 24 = 3072,
// the Rust kernels' 4-byte tile, so both book the same scratch), tiles handed out by an
// atomic counter (tile = counter - base), warp-striped 16-byte
// loads (lane l of warp w holds packs p*32 + l of the warp's 32*SCAN_ITEMS elements), per-pack scans
// in registers and across the warp with shuffles, warp totals through shared memory, and
// warp 0 looking back over the status words of 32 tiles at a time. A status word is
// ((epoch << 1 | inclusive) << 32) | value bits; epoch is fresh per launch.

#define SCAN_ITEMS 24
#define SCAN_PACKS (SCAN_ITEMS / 4)

__device__ __forceinline__ unsigned bits32(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned bits32(unsigned v) { return v; }
template <typename T> __device__ __forceinline__ T from_bits32(unsigned b);
template <> __device__ __forceinline__ float from_bits32<float>(unsigned b) { return __uint_as_float(b); }
template <> __device__ __forceinline__ unsigned from_bits32<unsigned>(unsigned b) { return b; }

__device__ __forceinline__ unsigned long long status_word(unsigned epoch, bool inclusive, unsigned bits) {
    return ((unsigned long long)((epoch << 1) | (inclusive ? 1u : 0u)) << 32) | bits;
}

__device__ __forceinline__ void st_relaxed_gpu(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_relaxed_gpu(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

template <typename T>
__device__ __forceinline__ T warp_scan(T v) {
    unsigned lane = threadIdx.x % 32;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T y = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= (unsigned)d) v = add_rn(y, v);
    }
    return v;
}

template <typename T, bool INCLUSIVE>
__device__ __forceinline__ void scan_tile(const T* __restrict__ x, size_t n, T* __restrict__ out,
                                          unsigned long long* status, size_t status_len,
                                          unsigned* counter, unsigned epoch, unsigned base) {
    typedef typename Pack<T>::type V;
    __shared__ unsigned sh_tile, sh_prefix;
    __shared__ unsigned sh_warp[32];
    unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32, warps = blockDim.x / 32;
    size_t tile_elems = (size_t)blockDim.x * SCAN_ITEMS;
    size_t tiles = (n + tile_elems - 1) / tile_elems;
    if (tiles > status_len) tiles = status_len;
    if (tid == 0) sh_tile = atomicAdd(counter, 1u) - base;
    __syncthreads();
    size_t tile = sh_tile;
    if (tile >= tiles) return;
    size_t tile_start = tile * tile_elems;
    size_t warp_start = tile_start + (size_t)warp * 32 * SCAN_ITEMS;
    bool full = tile_start + tile_elems <= n;
    T v[SCAN_PACKS][4];
#pragma unroll
    for (int p = 0; p < SCAN_PACKS; ++p) {
        size_t e = warp_start + ((size_t)p * 32 + lane) * 4;
        if (full) {
            V pk = *reinterpret_cast<const V*>(x + e);
            const T* ps = reinterpret_cast<const T*>(&pk);
#pragma unroll
            for (int j = 0; j < 4; ++j) v[p][j] = ps[j];
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) v[p][j] = e + j < n ? x[e + j] : T(0);
        }
    }
    T incl[SCAN_PACKS], pre[SCAN_PACKS];
#pragma unroll
    for (int p = 0; p < SCAN_PACKS; ++p) {
#pragma unroll
        for (int j = 1; j < 4; ++j) v[p][j] = add_rn(v[p][j - 1], v[p][j]);
        incl[p] = warp_scan(v[p][3]);
    }
    T carry = T(0);
#pragma unroll
    for (int p = 0; p < SCAN_PACKS; ++p) {
        T excl = __shfl_up_sync(FULL_MASK, incl[p], 1);
        T total = __shfl_sync(FULL_MASK, incl[p], 31);
        pre[p] = lane == 0 ? carry : add_rn(carry, excl);
        carry = add_rn(carry, total);
    }
    if (lane == 0) sh_warp[warp] = bits32(carry);
    __syncthreads();
    if (warp == 0) {
        T s = lane < warps ? from_bits32<T>(sh_warp[lane]) : T(0);
        s = warp_scan(s);
        T aggregate = __shfl_sync(FULL_MASK, s, warps - 1);
        T prefix = T(0);
        if (tile == 0) {
            if (lane == 0) st_relaxed_gpu(status, status_word(epoch, true, bits32(aggregate)));
        } else {
            if (lane == 0) st_relaxed_gpu(status + tile, status_word(epoch, false, bits32(aggregate)));
            long long end = (long long)tile;
            while (true) {
                long long pred = end - 1 - (long long)lane;
                unsigned long long w;
                while (true) {
                    w = pred < 0 ? status_word(epoch, true, bits32(T(0))) : ld_relaxed_gpu(status + pred);
                    if (__all_sync(FULL_MASK, (unsigned)(w >> 33) == epoch)) break;
                }
                unsigned incl_lanes = __ballot_sync(FULL_MASK, (w >> 32) & 1);
                bool counts = incl_lanes == 0 || lane <= (unsigned)(__ffs(incl_lanes) - 1);
                T val = counts ? from_bits32<T>((unsigned)w) : T(0);
                prefix = add_rn(warp_reduce<T, SumOp>(val), prefix);
                if (incl_lanes != 0) break;
                end -= 32;
            }
            if (lane == 0) st_relaxed_gpu(status + tile, status_word(epoch, true, bits32(add_rn(prefix, aggregate))));
        }
        if (lane < warps) sh_warp[lane] = bits32(s);
        if (lane == 0) sh_prefix = bits32(prefix);
    }
    __syncthreads();
    T base_prefix = add_rn(from_bits32<T>(sh_prefix), warp > 0 ? from_bits32<T>(sh_warp[warp - 1]) : T(0));
#pragma unroll
    for (int p = 0; p < SCAN_PACKS; ++p) {
        T pp = add_rn(base_prefix, pre[p]);
        T o[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) o[j] = INCLUSIVE ? add_rn(pp, v[p][j]) : (j == 0 ? pp : add_rn(pp, v[p][j - 1]));
        size_t e = warp_start + ((size_t)p * 32 + lane) * 4;
        if (full) {
            V pk;
            T* ps = reinterpret_cast<T*>(&pk);
#pragma unroll
            for (int j = 0; j < 4; ++j) ps[j] = o[j];
            *reinterpret_cast<V*>(out + e) = pk;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (e + j < n) out[e + j] = o[j];
        }
    }
}

#define SCAN_KERNEL(NAME, T, INCL)                                                             \
    extern "C" __global__ void NAME(const T* __restrict__ x, size_t n, T* __restrict__ out,    \
                                    unsigned long long* status, size_t status_len,             \
                                    unsigned* counter, unsigned epoch, unsigned base) {        \
        scan_tile<T, INCL>(x, n, out, status, status_len, counter, epoch, base);               \
    }

SCAN_KERNEL(cu_scan_inclusive_f32, float, true)
SCAN_KERNEL(cu_scan_exclusive_f32, float, false)
SCAN_KERNEL(cu_scan_inclusive_u32, unsigned, true)
SCAN_KERNEL(cu_scan_exclusive_u32, unsigned, false)

// ---- SGEMM: 128x128 block tile, 8x8 per thread, k step 8, double-buffered shared memory --

#define BM 128
#define BN 128
#define BK 8
#define A_STRIDE (BM + 4)

__device__ __forceinline__ void sgemm_quad(int m, int n, float alpha, float beta, float* C, int r, int c0, const float* v) {
    if (r >= m) return;
    size_t at = (size_t)r * n + c0;
    if (n % 4 == 0 && c0 < n) {
        float4 o;
        if (beta == 0.0f) {
            o = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
        } else {
            float4 old = *reinterpret_cast<const float4*>(C + at);
            o = make_float4(fmaf(beta, old.x, alpha * v[0]), fmaf(beta, old.y, alpha * v[1]),
                            fmaf(beta, old.z, alpha * v[2]), fmaf(beta, old.w, alpha * v[3]));
        }
        *reinterpret_cast<float4*>(C + at) = o;
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (c0 + j < n) C[at + j] = beta == 0.0f ? alpha * v[j] : fmaf(beta, C[at + j], alpha * v[j]);
    }
}

extern "C" __global__ void __launch_bounds__(256) cu_sgemm(int m, int n, int k, float alpha, const float* __restrict__ A,
                                                           const float* __restrict__ B, float beta, float* __restrict__ C) {
    __shared__ __align__(16) float As[2][BK][A_STRIDE];
    __shared__ __align__(16) float Bs[2][BK][BN];
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int ar = tid / 2, ak = (tid % 2) * 4;
    int bk = tid / 32, bc = (tid % 32) * 4;
    bool a_vec = k % 4 == 0, b_vec = n % 4 == 0;
    float av[4], bv[4];
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    auto load = [&](int kt) {
        int r = row0 + ar, kc = kt + ak;
        size_t at = (size_t)r * k + kc;
        if (a_vec && r < m && kc < k) {
            float4 t = *reinterpret_cast<const float4*>(A + at);
            av[0] = t.x; av[1] = t.y; av[2] = t.z; av[3] = t.w;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) av[j] = (r < m && kc + j < k) ? A[at + j] : 0.0f;
        }
        int rb = kt + bk, cb = col0 + bc;
        size_t bt = (size_t)rb * n + cb;
        if (b_vec && rb < k && cb < n) {
            float4 t = *reinterpret_cast<const float4*>(B + bt);
            bv[0] = t.x; bv[1] = t.y; bv[2] = t.z; bv[3] = t.w;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) bv[j] = (rb < k && cb + j < n) ? B[bt + j] : 0.0f;
        }
    };
    auto store = [&](int s) {
#pragma unroll
        for (int j = 0; j < 4; ++j) As[s][ak + j][ar] = av[j];
        *reinterpret_cast<float4*>(&Bs[s][bk][bc]) = make_float4(bv[0], bv[1], bv[2], bv[3]);
    };

    int k_tiles = (k + BK - 1) / BK;
    load(0);
    store(0);
    __syncthreads();
    for (int t = 0; t < k_tiles; ++t) {
        int s = t % 2;
        bool more = t + 1 < k_tiles;
        if (more) load((t + 1) * BK);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float4 a0 = *reinterpret_cast<const float4*>(&As[s][kk][ty * 4]);
            float4 a1 = *reinterpret_cast<const float4*>(&As[s][kk][64 + ty * 4]);
            float4 b0 = *reinterpret_cast<const float4*>(&Bs[s][kk][tx * 4]);
            float4 b1 = *reinterpret_cast<const float4*>(&Bs[s][kk][64 + tx * 4]);
            float af[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float bf[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
        }
        if (more) store(1 - s);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        int r = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
        sgemm_quad(m, n, alpha, beta, C, r, col0 + tx * 4, &acc[i][0]);
        sgemm_quad(m, n, alpha, beta, C, r, col0 + 64 + tx * 4, &acc[i][4]);
    }
}

// CUDA C references for `ferrocuda mandelbrot-bench`, compiled at run time with
// `nvcc -O3 -arch=sm_XY -cubin` (default flags otherwise).
//
// - cu_mandel_naive_*: the textbook escape-time loop, one thread per pixel.
// - cu_mandel_cardioid_*: the same loop after the textbook main-cardioid and period-2-bulb
//   test (q·(q + x − 1/4) ≤ y²/4, (x + 1)² + y² ≤ 1/16), which answers "inside" at once.
//
// The orbit step is written with explicit fused multiply-adds, exactly as ferrocuda's
// `common::escape::step` (re' = fma(re, re, fma(−im, im, cr)), im' = fma(2·re, im, ci),
// |z'|² = fma(im', im', re'·re')), and the pixel's c as `Viewport::pixel_to_complex`
// (x0 + x·dx, y0 − y·dy, each operation rounded on its own), so nvcc's contraction of
// a·b + c cannot change the orbit: differences in escape counts are differences of algorithm.
// Output: counts[y·width + x] = escape time (max_iter for points taken to be inside).

template <typename T> struct Ops;
template <> struct Ops<float> {
    static __device__ float fma(float a, float b, float c) { return fmaf(a, b, c); }
    static __device__ float mul(float a, float b) { return __fmul_rn(a, b); }
    static __device__ float add(float a, float b) { return __fadd_rn(a, b); }
    static __device__ float sub(float a, float b) { return __fsub_rn(a, b); }
};
template <> struct Ops<double> {
    static __device__ double fma(double a, double b, double c) { return ::fma(a, b, c); }
    static __device__ double mul(double a, double b) { return __dmul_rn(a, b); }
    static __device__ double add(double a, double b) { return __dadd_rn(a, b); }
    static __device__ double sub(double a, double b) { return __dsub_rn(a, b); }
};

template <typename T, bool CARDIOID>
__device__ void mandel(unsigned width, unsigned height, T x0, T y0, T dx, T dy,
                       unsigned max_iter, unsigned* counts) {
    typedef Ops<T> O;
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    T cr = O::add(x0, O::mul((T)x, dx));
    T ci = O::sub(y0, O::mul((T)y, dy));
    size_t i = (size_t)y * width + x;
    if (CARDIOID) {
        T a = cr - (T)0.25;
        T q = a * a + ci * ci;
        T b = cr + (T)1;
        if (q * (q + a) <= (T)0.25 * ci * ci || b * b + ci * ci <= (T)0.0625) {
            counts[i] = max_iter;
            return;
        }
    }
    T re = 0, im = 0;
    unsigned n = 0;
    while (n < max_iter) {
        T nr = O::fma(re, re, O::fma(-im, im, cr));
        T ni = O::fma(re + re, im, ci);
        T norm = O::fma(ni, ni, O::mul(nr, nr));
        re = nr;
        im = ni;
        n++;
        if (norm > (T)4) break;
    }
    counts[i] = n;
}

#define KERNEL(NAME, T, CARDIOID)                                                         \
    extern "C" __global__ void NAME(unsigned width, unsigned height, T x0, T y0, T dx, T dy, \
                                    unsigned max_iter, unsigned* counts) {                \
        mandel<T, CARDIOID>(width, height, x0, y0, dx, dy, max_iter, counts);             \
    }

KERNEL(cu_mandel_naive_f32, float, false)
KERNEL(cu_mandel_cardioid_f32, float, true)
KERNEL(cu_mandel_naive_f64, double, false)
KERNEL(cu_mandel_cardioid_f64, double, true)

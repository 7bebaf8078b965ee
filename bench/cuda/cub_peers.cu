// ferrocuda bench peers: CUB's device-wide reductions, scans and radix sorts (the library a CUDA C++
// programmer would call), built at run time by `ferrocuda bench` into a shared library with
//   nvcc -O3 -arch=sm_XY -shared -Xcompiler -fPIC -o libferro_cub.so cub_peers.cu
// and called through the C functions below. Each follows CUB's two-phase protocol: with
// `temp == nullptr` it only writes the scratch size to `*temp_bytes`.
//
// dtype: 0 = float, 1 = double, 2 = unsigned int; for scans also 3 = the user-operator
// example, affine maps x -> a*x + b modulo 2^32 packed as a | b << 32 in an unsigned long
// long and composed in scan order (`AffineCompose`, as kernels::scan::Affine).
// op: 0 = sum, 1 = min, 2 = max.
// Sorts (`ferro_cub_sort`, cub::DeviceRadixSort::SortKeys / SortPairs with unsigned values):
// key dtype 0 = float, 2 = unsigned int, 4 = int, 5 = unsigned long long; all key bits.
// Returns a cudaError_t value (0 = success).
#include <cub/cub.cuh>

namespace {

template <typename T>
cudaError_t reduce(int op, const void *in, void *out, int n, void *temp, size_t *temp_bytes,
                   cudaStream_t stream) {
    const T *x = static_cast<const T *>(in);
    T *r = static_cast<T *>(out);
    switch (op) {
    case 0: return cub::DeviceReduce::Sum(temp, *temp_bytes, x, r, n, stream);
    case 1: return cub::DeviceReduce::Min(temp, *temp_bytes, x, r, n, stream);
    case 2: return cub::DeviceReduce::Max(temp, *temp_bytes, x, r, n, stream);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T>
cudaError_t scan(int exclusive, const void *in, void *out, int n, void *temp, size_t *temp_bytes,
                 cudaStream_t stream) {
    const T *x = static_cast<const T *>(in);
    T *y = static_cast<T *>(out);
    return exclusive ? cub::DeviceScan::ExclusiveSum(temp, *temp_bytes, x, y, n, stream)
                     : cub::DeviceScan::InclusiveSum(temp, *temp_bytes, x, y, n, stream);
}

// Composition of affine maps mod 2^32: f, then g (x -> g(f(x))); associative, not
// commutative, identity (1, 0).
struct AffineCompose {
    __host__ __device__ unsigned long long operator()(unsigned long long f,
                                                      unsigned long long g) const {
        unsigned fa = static_cast<unsigned>(f), fb = static_cast<unsigned>(f >> 32);
        unsigned ga = static_cast<unsigned>(g), gb = static_cast<unsigned>(g >> 32);
        return static_cast<unsigned long long>(ga * fa) |
               (static_cast<unsigned long long>(ga * fb + gb) << 32);
    }
};

cudaError_t affine_scan(int exclusive, const void *in, void *out, int n, void *temp,
                        size_t *temp_bytes, cudaStream_t stream) {
    const unsigned long long *x = static_cast<const unsigned long long *>(in);
    unsigned long long *y = static_cast<unsigned long long *>(out);
    const unsigned long long identity = 1;
    return exclusive ? cub::DeviceScan::ExclusiveScan(temp, *temp_bytes, x, y, AffineCompose(),
                                                      identity, n, stream)
                     : cub::DeviceScan::InclusiveScan(temp, *temp_bytes, x, y, AffineCompose(),
                                                      n, stream);
}

template <typename K>
cudaError_t sort(int pairs, const void *keys_in, void *keys_out, const void *values_in,
                 void *values_out, int n, void *temp, size_t *temp_bytes, cudaStream_t stream) {
    const K *k = static_cast<const K *>(keys_in);
    K *ko = static_cast<K *>(keys_out);
    const int end_bit = static_cast<int>(sizeof(K) * 8);
    if (!pairs) {
        return cub::DeviceRadixSort::SortKeys(temp, *temp_bytes, k, ko, n, 0, end_bit, stream);
    }
    const unsigned *v = static_cast<const unsigned *>(values_in);
    unsigned *vo = static_cast<unsigned *>(values_out);
    return cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, k, ko, v, vo, n, 0, end_bit,
                                           stream);
}

} // namespace

extern "C" int ferro_cub_reduce(int op, int dtype, const void *in, void *out, int n, void *temp,
                                size_t *temp_bytes, cudaStream_t stream) {
    switch (dtype) {
    case 0: return reduce<float>(op, in, out, n, temp, temp_bytes, stream);
    case 1: return reduce<double>(op, in, out, n, temp, temp_bytes, stream);
    case 2: return reduce<unsigned>(op, in, out, n, temp, temp_bytes, stream);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" int ferro_cub_scan(int exclusive, int dtype, const void *in, void *out, int n,
                              void *temp, size_t *temp_bytes, cudaStream_t stream) {
    switch (dtype) {
    case 0: return scan<float>(exclusive, in, out, n, temp, temp_bytes, stream);
    case 1: return scan<double>(exclusive, in, out, n, temp, temp_bytes, stream);
    case 2: return scan<unsigned>(exclusive, in, out, n, temp, temp_bytes, stream);
    case 3: return affine_scan(exclusive, in, out, n, temp, temp_bytes, stream);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" int ferro_cub_sort(int pairs, int dtype, const void *keys_in, void *keys_out,
                              const void *values_in, void *values_out, int n, void *temp,
                              size_t *temp_bytes, cudaStream_t stream) {
    switch (dtype) {
    case 0: return sort<float>(pairs, keys_in, keys_out, values_in, values_out, n, temp, temp_bytes, stream);
    case 2: return sort<unsigned>(pairs, keys_in, keys_out, values_in, values_out, n, temp, temp_bytes, stream);
    case 4: return sort<int>(pairs, keys_in, keys_out, values_in, values_out, n, temp, temp_bytes, stream);
    case 5: return sort<unsigned long long>(pairs, keys_in, keys_out, values_in, values_out, n, temp, temp_bytes, stream);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" const char *ferro_cub_error_string(int error) {
    return cudaGetErrorString(static_cast<cudaError_t>(error));
}

// CUB_VERSION: major·100000 + minor·100 + subminor.
extern "C" int ferro_cub_version(void) { return CUB_VERSION; }

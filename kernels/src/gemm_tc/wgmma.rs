//! The sm_90a GEMM on `wgmma` + TMA (in progress).

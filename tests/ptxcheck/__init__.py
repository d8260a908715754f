"""An operator backend for tests without a GPU: every operator call is compiled by the GPU
backend (numba-cuda, to PTX for sm_90, never launched), then computed by the CPU backend. A
functor that numba-cuda cannot compile fails here."""

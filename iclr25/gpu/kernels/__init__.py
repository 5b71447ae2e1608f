"""One sub-package per CUDA kernel (source, wrapper, reference): see ``registry``."""

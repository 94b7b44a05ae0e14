// The translation unit that builds the precompiled LibTorch header (cmake/OrbitlawTorchPch.cmake).

# Every third-party dependency is found here, once. scripts/setup.sh installs them:
# Debian packages for the C++ libraries, the pinned PyPI torch wheel (LibTorch) in .venv.
find_package(Threads REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(Boost 1.74 REQUIRED)  # Odeint is header-only
find_package(HDF5 REQUIRED COMPONENTS C CXX)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)

# LibTorch: from the torch wheel in the project's .venv unless the caller points CMAKE_PREFIX_PATH elsewhere.
if(NOT Torch_DIR)
  set(_venv_python "${CMAKE_CURRENT_SOURCE_DIR}/.venv/bin/python")
  if(NOT EXISTS "${_venv_python}")
    set(_venv_python python3)
  endif()
  execute_process(COMMAND "${_venv_python}" -c "import torch;print(torch.utils.cmake_prefix_path)"
                  OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _torch_rc
                  ERROR_QUIET)
  if(_torch_rc EQUAL 0)
    list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
  endif()
endif()
# A CUDA-enabled torch makes its CMake config probe the CUDA toolkit. Without a GPU the probe cannot detect
# an architecture, so name them (Hopper for the H200; Ampere for A100); the C++20 dialect is not one nvcc's
# CMake support knows, so the CUDA sources use C++17.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
set(CMAKE_CUDA_STANDARD 17)
if(ORBITLAW_CUDA STREQUAL "OFF")
  # Keep torch's config away from the toolkit entirely.
  set(CAFFE2_USE_CUDA OFF)
endif()
find_package(Torch REQUIRED)

# The torch wheel's CUDA libraries live in sibling nvidia/*/lib folders that libtorch_cuda.so finds at run time
# through its RUNPATH; the linker needs to be told where they are too, or it picks up the system toolkit's
# older NCCL and fails on missing symbols.
file(GLOB ORBITLAW_TORCH_NVIDIA_LIBDIRS "${Torch_DIR}/../../../../nvidia/*/lib")
add_library(orbitlaw_torch INTERFACE)
target_link_libraries(orbitlaw_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(orbitlaw_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
foreach(_d ${ORBITLAW_TORCH_NVIDIA_LIBDIRS})
  target_link_options(orbitlaw_torch INTERFACE "LINKER:-rpath-link,${_d}")
endforeach()
# Some torch wheels (2.5 to at least 2.11; pytorch/pytorch#133437) export copies of libstdc++'s
# std::filesystem functions from libtorch.so and libtorch_cpu.so; a program that lists those libraries before
# libstdc++ calls the copies, and with torch 2.11 std::filesystem::remove_all crashes (a null call). The dynamic
# loader takes the first definition in DT_NEEDED order, so libstdc++ is named first: link options precede the
# objects and libraries on the link line, and --no-as-needed keeps it although nothing references it yet there.
# tests/common/check_link_order.sh checks the order.
target_link_options(orbitlaw_torch INTERFACE "LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state")

set(ORBITLAW_HAVE_CUDA OFF)
if(NOT ORBITLAW_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER AND TARGET torch_cuda)
    enable_language(CUDA)
    set(ORBITLAW_HAVE_CUDA ON)
  elseif(ORBITLAW_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ORBITLAW_CUDA=ON but nvcc or a CUDA-enabled LibTorch is missing")
  endif()
endif()
message(STATUS "orbitlaw: LibTorch ${Torch_VERSION} from ${Torch_DIR}; CUDA kernels: ${ORBITLAW_HAVE_CUDA}")

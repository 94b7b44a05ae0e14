# Unity build: the C++ sources of each target are compiled in a few batches (one translation unit per batch)
# instead of one by one. Most of a fresh build's time is spent on headers every source re-reads (LibTorch's
# precompiled header alone costs about 6 s to load per source; CLI11, spdlog, Eigen and GoogleTest a few
# seconds each), so fewer translation units mean a shorter build on a 2-core machine.
#
# The LibTorch sources and the others are batched apart, so a batch either loads the precompiled LibTorch
# header (OrbitlawTorchPch.cmake) or does not. Sources keep file-local names in anonymous namespaces, which
# must therefore be unique within a target; with ORBITLAW_UNITY_BUILD=OFF every source compiles alone as
# before (use it to find such a clash, or when editing one file of a large target).
option(ORBITLAW_UNITY_BUILD "Compile each target's sources in a few batches (faster fresh builds)" ON)
set(ORBITLAW_UNITY_TORCH_BATCH 4 CACHE STRING "LibTorch sources per unity batch")
set(ORBITLAW_UNITY_PLAIN_BATCH 8 CACHE STRING "Other C++ sources per unity batch")

# Batches the C++ sources of `target` (a target with more than one C++ source).
function(orbitlaw_unity_build target)
  get_target_property(_sources ${target} SOURCES)
  get_target_property(_dir ${target} SOURCE_DIR)
  get_target_property(_binary_dir ${target} BINARY_DIR)
  set(_torch "")
  set(_plain "")
  foreach(_source IN LISTS _sources)
    if(NOT _source MATCHES "\\.(cpp|cc|cxx)$")
      continue()  # CUDA, headers, generated objects: compiled as before
    endif()
    cmake_path(ABSOLUTE_PATH _source BASE_DIRECTORY "${_dir}" OUTPUT_VARIABLE _path)
    if(NOT EXISTS "${_path}")
      continue()  # generated at build time (the build-info source): alone
    endif()
    set(_uses_torch FALSE)
    if(ORBITLAW_TORCH_PCH)
      orbitlaw_source_uses_torch("${_path}" _uses_torch)
    endif()
    # Absolute paths: a relative one would be read against this (the top) directory, not the target's.
    if(_uses_torch)
      list(APPEND _torch "${_path}")
    else()
      list(APPEND _plain "${_path}")
    endif()
  endforeach()
  list(LENGTH _torch _n_torch)
  list(LENGTH _plain _n_plain)
  math(EXPR _n "${_n_torch} + ${_n_plain}")
  if(_n LESS 2)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  # GCC warns when a class uses a type from an anonymous namespace of an included file, as if that file were
  # a header shared between translation units; in a unity batch every source is included that way, once.
  target_compile_options(${target} PRIVATE
                         $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-subobject-linkage>)
  foreach(_kind torch plain)
    string(TOUPPER "${_kind}" _upper)
    set(_batch_size ${ORBITLAW_UNITY_${_upper}_BATCH})
    set(_i 0)
    foreach(_source IN LISTS _${_kind})
      math(EXPR _batch "${_i} / ${_batch_size}")
      set_source_files_properties(${_source} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP "${_kind}${_batch}")
      math(EXPR _i "${_i} + 1")
    endforeach()
    if(_kind STREQUAL "plain" AND _i GREATER 0)
      # CMake gives a target's precompiled header to every unity file of the target; a batch of sources that
      # do not use LibTorch must not pay for loading it. The name is CMake's (Unity/unity_<group>_cxx.cxx).
      math(EXPR _last "(${_i} - 1) / ${_batch_size}")
      foreach(_batch RANGE ${_last})
        set_source_files_properties(
          "${_binary_dir}/CMakeFiles/${target}.dir/Unity/unity_plain${_batch}_cxx.cxx"
          TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endforeach()
    endif()
  endforeach()
endfunction()

# Applies orbitlaw_unity_build to every library and executable defined under `directory`.
function(orbitlaw_unity_build_all directory)
  if(NOT ORBITLAW_UNITY_BUILD)
    return()
  endif()
  get_property(_targets DIRECTORY "${directory}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_target IN LISTS _targets)
    get_target_property(_type ${_target} TYPE)
    if(_type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$"
       AND NOT _target STREQUAL "orbitlaw_torch_pch")
      orbitlaw_unity_build(${_target})
    endif()
  endforeach()
  get_property(_subdirectories DIRECTORY "${directory}" PROPERTY SUBDIRECTORIES)
  foreach(_subdirectory IN LISTS _subdirectories)
    orbitlaw_unity_build_all("${_subdirectory}")
  endforeach()
endfunction()

# gemm_add_diag_variant(<name> <folder> GENERATOR <script>)
#
# A variant of steps/<folder>/hopper.cu for the diagnostics (tools/diag/variants.py): the build
# runs `<script> --variant <name> --out <build>/gen/<name>.cu` whenever the step file or the
# script changes, and compiles the result, like a step's own kernels (cmake/GemmStep.cmake), as
# the object library diag_<name> (sm_90a, warning-free). The variant's functions live in
# namespace gemm::diag_<name>::hopper; a tool links the object library and declares them.
# No source outside a step's own targets includes a step file: a variant is generated from it.
function(gemm_add_diag_variant name folder)
  cmake_parse_arguments(V "" "GENERATOR" "" ${ARGN})
  set(step_file ${PROJECT_SOURCE_DIR}/steps/${folder}/hopper.cu)
  set(src ${CMAKE_CURRENT_BINARY_DIR}/gen/${name}.cu)
  add_custom_command(
    OUTPUT ${src}
    COMMAND ${Python3_EXECUTABLE} ${V_GENERATOR} --variant ${name} --out ${src}
    DEPENDS ${V_GENERATOR} ${step_file}
    COMMENT "Generating the step variant ${name} from steps/${folder}/hopper.cu"
    VERBATIM)
  add_library(diag_${name} OBJECT ${src})
  set_target_properties(diag_${name} PROPERTIES CUDA_ARCHITECTURES 90a)
  target_link_libraries(diag_${name} PUBLIC gemm_common)
  target_compile_options(diag_${name} PRIVATE ${GEMM_CUDA_WARNINGS})
endfunction()

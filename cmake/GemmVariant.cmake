# Single-bug variants of real steps, for the emulator's tests (docs/emulator.md, "Single-bug variants
# of the steps"). Included by tests/emu/CMakeLists.txt; the variants themselves are listed in
# tests/emu/variants.cmake.
#
# gemm_add_step_variant(<name> STEP <NN> TRACK <hopper|blackwell>
#                       REPLACE <exact old text> WITH <new text> [REPLACE <old> WITH <new>]...
#                       EXPECT <regex> [SHAPE <MxNxK>] [SMS <n>] [SEEDS <seed>...])
#
# Makes a copy of steps/<NN>_*/<TRACK>.cu in which each REPLACE text is replaced by its WITH text
# (several pairs make one bug that needs more than one edit, such as moving a line). Configure
# fails, naming the variant, when a REPLACE text is not found exactly once in the step file: a
# variant never silently stops testing anything after a step changes; make the text longer, or
# update it. The copy is compiled as an emulated object of its own (as cmake/GemmStep.cmake compiles
# step<NN>_emu_<track>, but in namespace gemm::variant_<name>::step<NN>::<track>) and registered in
# emu_variant_tests as the test Variants/Variant.FailsWithItsRule/<name> (labels emu and variant).
# The test runs the variant on the emulator at SHAPE (default 520x392x136: several tiles per CTA of
# a persistent grid on 2 SMs, an odd number of K slices; steps 1 and 2 their own shapes), on SMS
# emulated SMs (default 2), once per emulator seed (default 1 2 3), exact mode when K <= 512; it
# passes only if every run fails with a message that EXPECT matches (std::regex, ECMAScript,
# searched in the message with each line break read as " | ", so that [^|]* stays within a line:
# the first line names the cause). GEMM_EMU_SHOW=1 prints them.
#
# The copy keeps the step file's name and line numbers (#line directives after each replaced
# text), so the emulator names lines of the real step file. Keep a replacement's line count (leave
# a blank line for a removed one) and every line keeps its number. In EXPECT:
#   @FILE@             the step file, "steps/<NN>_<name>/<track>.cu"
#   @LINE@             the line where the first REPLACE text begins (@LINE+1@, @LINE-2@: offsets)
#   @LINE_OF:<text>@   the line of the step file that holds <text> (which must occur exactly once)
# Write the texts as bracket arguments ([=[ ... ]=]): they keep semicolons, quotes, backslashes and
# line breaks as they are. Prefer code to comments in REPLACE texts (comments are edited more often).
# Example (tests/emu/variants.cmake has the real ones): a barrier initialised for fewer arrivals than
# come.
#   gemm_add_step_variant(step05_hopper_empty_count_1 STEP 05 TRACK hopper
#     REPLACE [=[mbarrier_init(&smem.empty[s], kReleaseArrivals);]=]
#     WITH [=[mbarrier_init(&smem.empty[s], 1);]=]
#     EXPECT [=[^emulator: more arrivals than the init count: .*initialised at @FILE@:@LINE@]=])
# The step file itself is never #included from elsewhere (the rule of issue 16): the variant is a
# copy in the build directory, made again when the step file changes.
#
# gemm_add_step_variant(<name> LIBRARY STEP <NN> TRACK <t> REPLACE <old> WITH <new> ...)
#
# The same copy for other tests instead (no EXPECT, SHAPE, SMS or SEEDS): a step with something of
# its own exposed or set differently from outside it (step 12 at a forced width, say), which the
# step file itself never is. It is compiled as the object library step_copy_<name>_emu (the emulated
# build, as above, in namespace gemm::step_copy_<name>::step<NN>::<track>) and, where the build has
# the track, step_copy_<name>_gpu (its nvcc build, in namespace gemm::step_copy_<name>_gpu::...);
# a test links them and declares what it calls.
function(gemm_add_step_variant name)
  # Parsed by hand: REPLACE / WITH may repeat, and their texts keep their semicolons.
  set(where "gemm_add_step_variant(${name})")
  set(n_rep 0)
  set(i 1)
  while(i LESS ARGC)
    set(key "${ARGV${i}}")
    math(EXPR j "${i} + 1")
    if(key STREQUAL "LIBRARY")
      set(V_LIBRARY ON)
      math(EXPR i "${i} + 1")
      continue()
    endif()
    if(key STREQUAL "SEEDS")
      set(V_SEEDS "")
      while(j LESS ARGC AND "${ARGV${j}}" MATCHES "^[0-9]+$")
        list(APPEND V_SEEDS "${ARGV${j}}")
        math(EXPR j "${j} + 1")
      endwhile()
      set(i ${j})
      continue()
    endif()
    if(NOT j LESS ARGC)
      message(FATAL_ERROR "${where}: ${key} needs a value")
    endif()
    if(key MATCHES "^(STEP|TRACK|EXPECT|SHAPE|SMS)$")
      set(V_${key} "${ARGV${j}}")
    elseif(key STREQUAL "REPLACE")
      set(rep_old_${n_rep} "${ARGV${j}}")
      math(EXPR n_rep "${n_rep} + 1")
    elseif(key STREQUAL "WITH")
      math(EXPR r "${n_rep} - 1")
      if(r LESS 0 OR DEFINED rep_new_${r})
        message(FATAL_ERROR "${where}: each WITH follows its REPLACE")
      endif()
      set(rep_new_${r} "${ARGV${j}}")
    else()
      message(FATAL_ERROR "${where}: unexpected argument '${key}'")
    endif()
    math(EXPR i "${j} + 1")
  endwhile()
  if(NOT name MATCHES "^[A-Za-z][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: the name must be a C++ identifier")
  endif()
  set(required STEP TRACK EXPECT)
  if(V_LIBRARY)
    set(required STEP TRACK)
    foreach(arg EXPECT SHAPE SMS SEEDS)
      if(DEFINED V_${arg})
        message(FATAL_ERROR "${where}: a LIBRARY takes no ${arg}")
      endif()
    endforeach()
  endif()
  foreach(arg IN LISTS required)
    if(NOT DEFINED V_${arg} OR "${V_${arg}}" STREQUAL "")
      message(FATAL_ERROR "${where}: ${arg} is required")
    endif()
  endforeach()
  if(n_rep EQUAL 0)
    message(FATAL_ERROR "${where}: REPLACE is required")
  endif()
  math(EXPR last_rep "${n_rep} - 1")
  foreach(r RANGE ${last_rep})
    if(NOT DEFINED rep_new_${r})
      message(FATAL_ERROR "${where}: REPLACE number ${r} has no WITH")
    endif()
  endforeach()
  if(NOT V_TRACK MATCHES "^(hopper|blackwell)$")
    message(FATAL_ERROR "${where}: TRACK must be hopper or blackwell")
  endif()
  file(GLOB step_dir LIST_DIRECTORIES true "${PROJECT_SOURCE_DIR}/steps/${V_STEP}_*")
  list(LENGTH step_dir n_dirs)
  if(NOT n_dirs EQUAL 1)
    message(FATAL_ERROR "${where}: no single steps/${V_STEP}_* directory (found: ${step_dir})")
  endif()
  get_filename_component(step_name "${step_dir}" NAME)
  set(rel "steps/${step_name}/${V_TRACK}.cu")
  set(src "${PROJECT_SOURCE_DIR}/${rel}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${src}")
  file(READ "${src}" content)

  # Each REPLACE text: its one occurrence in the step file, and the lines it spans.
  set(order "")
  foreach(r RANGE ${last_rep})
    _gemm_variant_find_once("${content}" "${rep_old_${r}}" "${where}: REPLACE text in ${rel}" pos_${r})
    string(LENGTH "${rep_old_${r}}" len_${r})
    list(APPEND order "${pos_${r}}:${r}")
  endforeach()
  list(SORT order COMPARE NATURAL)
  # The copy: the step file with each replacement, each followed (after the rest of its last line)
  # by #line back on the step's numbering.
  set(copy_text "#line 1 \"${rel}\"\n")
  set(cursor 0)
  set(first_line "")
  foreach(entry IN LISTS order)
    string(REGEX REPLACE "^[0-9]+:" "" r "${entry}")
    if(pos_${r} LESS cursor)
      message(FATAL_ERROR "${where}: two REPLACE texts overlap")
    endif()
    math(EXPR gap "${pos_${r}} - ${cursor}")
    string(SUBSTRING "${content}" ${cursor} ${gap} kept)
    string(SUBSTRING "${content}" 0 ${pos_${r}} head)
    _gemm_variant_count_lines("${head}" line)
    math(EXPR line "${line} + 1")
    if(r EQUAL 0)
      set(first_line ${line})
    endif()
    _gemm_variant_count_lines("${rep_old_${r}}" spanned)
    math(EXPR after "${pos_${r}} + ${len_${r}}")
    string(SUBSTRING "${content}" ${after} -1 suffix)
    string(FIND "${suffix}" "\n" eol)
    if(eol EQUAL -1)
      string(LENGTH "${suffix}" eol)
      set(rest_of_line "${suffix}\n")
    else()
      math(EXPR eol "${eol} + 1")
      string(SUBSTRING "${suffix}" 0 ${eol} rest_of_line)
    endif()
    math(EXPR next_line "${line} + ${spanned} + 1")
    string(APPEND copy_text "${kept}${rep_new_${r}}${rest_of_line}#line ${next_line} \"${rel}\"\n")
    math(EXPR cursor "${after} + ${eol}")
  endforeach()
  string(SUBSTRING "${content}" ${cursor} -1 tail)
  string(APPEND copy_text "${tail}")
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/variants")
  set(copy "${out_dir}/${name}.cu")
  file(WRITE "${copy}.tmp" "${copy_text}")
  configure_file("${copy}.tmp" "${copy}" COPYONLY)  # rewritten only when it changes

  if(V_LIBRARY)
    _gemm_step_copy_libraries(${name} "${copy}" "${rel}")
    return()
  endif()

  # EXPECT's placeholders.
  set(expect "${V_EXPECT}")
  string(REPLACE "@FILE@" "${rel}" expect "${expect}")
  string(REPLACE "@LINE@" "${first_line}" expect "${expect}")
  string(REGEX MATCHALL "@LINE[+-][0-9]+@" offsets "${expect}")
  foreach(o IN LISTS offsets)
    string(REGEX REPLACE "@LINE([+-][0-9]+)@" "\\1" d "${o}")
    math(EXPR l "${first_line} ${d}")
    string(REPLACE "${o}" "${l}" expect "${expect}")
  endforeach()
  while(expect MATCHES "@LINE_OF:([^@]+)@")
    set(text "${CMAKE_MATCH_1}")
    _gemm_variant_find_once("${content}" "${text}" "${where}: @LINE_OF:${text}@ in ${rel}" p)
    string(SUBSTRING "${content}" 0 ${p} head)
    _gemm_variant_count_lines("${head}" l)
    math(EXPR l "${l} + 1")
    string(REPLACE "@LINE_OF:${text}@" "${l}" expect "${expect}")
  endwhile()

  # Defaults: steps 1 and 2 have fixed shapes; from step 3 on, several tiles per CTA of a
  # persistent grid on 2 emulated SMs, with an odd number of K slices.
  if(NOT V_SHAPE)
    if(V_STEP STREQUAL "01")
      set(V_SHAPE 128x128x64)
    elseif(V_STEP STREQUAL "02")
      set(V_SHAPE 128x128x192)
    else()
      set(V_SHAPE 520x392x136)
    endif()
  endif()
  if(NOT V_SHAPE MATCHES "^([0-9]+)x([0-9]+)x([0-9]+)$")
    message(FATAL_ERROR "${where}: SHAPE must be MxNxK")
  endif()
  set(m ${CMAKE_MATCH_1})
  set(n ${CMAKE_MATCH_2})
  set(k ${CMAKE_MATCH_3})
  if(NOT V_SMS)
    set(V_SMS 2)
  endif()
  if(NOT V_SEEDS)
    set(V_SEEDS 1 2 3)
  endif()
  list(JOIN V_SEEDS ", " seeds)

  # The emulated object: the copy compiled as cmake/GemmStep.cmake compiles a step, in namespace
  # gemm::variant_<name>, and its registration in emu_variant_tests.
  set(tu "${out_dir}/${name}_emu.cpp")
  file(CONFIGURE OUTPUT "${tu}" CONTENT
"// Generated by cmake/GemmVariant.cmake: variant ${name} of ${rel}, compiled as host C++ against the
// host prelude for the functional emulator (emu/).
#include \"emu/prelude.h\"
namespace gemm { inline namespace variant_${name} { namespace step${V_STEP} { namespace ${V_TRACK} {} } } }
#include \"${copy}\"
namespace gemm {
Status variant_${name}_run(const Problem& p, cudaStream_t stream) {
  return variant_${name}::step${V_STEP}::${V_TRACK}::run(p, stream);
}
}  // namespace gemm
" @ONLY)
  set(reg "${out_dir}/${name}_reg.cpp")
  file(CONFIGURE OUTPUT "${reg}" CONTENT
"// Generated by cmake/GemmVariant.cmake: registers variant ${name} of ${rel} in emu_variant_tests.
#include \"tests/emu/variant_registry.h\"
namespace gemm {
Status variant_${name}_run(const Problem& p, cudaStream_t stream);
namespace {
const bool registered = test::register_variant({\"${name}\", \"${rel}\", &variant_${name}_run,
                                                ${m}, ${n}, ${k}, ${V_SMS}, {${seeds}},
                                                R\"gemm_variant(${expect})gemm_variant\"});
}  // namespace
}  // namespace gemm
" @ONLY)
  add_library(variant_${name} OBJECT "${tu}" "${reg}")
  target_link_libraries(variant_${name} PRIVATE gemm_common GTest::gtest)
  target_include_directories(variant_${name} PRIVATE "${PROJECT_SOURCE_DIR}")
  target_compile_options(variant_${name} PRIVATE ${GEMM_CXX_WARNINGS} -Wno-unknown-pragmas -Wno-psabi)

  if(NOT TARGET emu_variant_tests)
    add_executable(emu_variant_tests "${PROJECT_SOURCE_DIR}/tests/emu/variant_test.cpp")
    target_link_libraries(emu_variant_tests PRIVATE gemm_harness gemm_emu GTest::gtest GTest::gtest_main)
    target_compile_options(emu_variant_tests PRIVATE ${GEMM_CXX_WARNINGS})
    gtest_discover_tests(emu_variant_tests DISCOVERY_MODE PRE_TEST NO_PRETTY_VALUES PROPERTIES LABELS variant)
  endif()
  target_link_libraries(emu_variant_tests PRIVATE variant_${name})

  if(GEMM_GPU_VARIANTS AND V_TRACK STREQUAL "hopper")
    _gemm_gpu_variant(${name} "${copy}" "${rel}" "${expect}")
  endif()
endfunction()

# A hopper variant as a program of its own for the GPU (GEMM_GPU_VARIANTS; tools/diag/variants_on_gpu.py
# runs it, docs/emulator.md, "On a GPU"): the step driver (harness/driver.cpp) on a registry whose
# hopper track is the variant's nvcc build for sm_90a and whose emulated hopper track is its
# emulated build, so one executable shows both what the GPU does with the bug and what the emulator
# says. <build>/gpu_variants/<name> and, beside it, <name>.json: the variant's shape, SMs, seeds and
# EXPECT, which the runner reads. Reads V_STEP, m, n, k, V_SMS and V_SEEDS of the caller.
function(_gemm_gpu_variant name copy rel expect)
  _gemm_step_copy_libraries(${name} "${copy}" "${rel}")
  set(out_dir "${PROJECT_BINARY_DIR}/gpu_variants")
  set(num ${V_STEP})
  string(REGEX REPLACE "^0+" "" number "${num}")
  set(gpu_ns "gemm::step_copy_${name}_gpu::step${num}::hopper")
  set(emu_ns "gemm::step_copy_${name}::step${num}::hopper")
  set(decls "namespace ${gpu_ns} { Status run(const Problem&, cudaStream_t); }
namespace ${emu_ns} { Status run(const Problem&, cudaStream_t); }")
  set(hopper_fn "&${gpu_ns}::run")
  set(blackwell_fn "nullptr")
  set(sm103a "false")
  set(hopper_emu_fn "&${emu_ns}::run")
  set(blackwell_emu_fn "nullptr")
  set(registry "${CMAKE_CURRENT_BINARY_DIR}/variants/${name}_gpu_registry.cpp")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/step_registry.cpp.in ${registry} @ONLY)
  set(main "${CMAKE_CURRENT_BINARY_DIR}/variants/${name}_gpu_main.cpp")
  set(program "${name}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/step_main.cpp.in ${main} @ONLY)
  add_executable(gpu_variant_${name} ${main} ${registry})
  target_link_libraries(gpu_variant_${name} PRIVATE step_copy_${name}_gpu step_copy_${name}_emu gemm_harness gemm_emu)
  target_compile_options(gpu_variant_${name} PRIVATE ${GEMM_CXX_WARNINGS})
  set_target_properties(gpu_variant_${name} PROPERTIES OUTPUT_NAME ${name} RUNTIME_OUTPUT_DIRECTORY "${out_dir}")
  if(NOT TARGET gpu_variants)
    add_custom_target(gpu_variants)
  endif()
  add_dependencies(gpu_variants gpu_variant_${name})

  _gemm_json_string("${expect}" expect_json)
  list(JOIN V_SEEDS ", " seeds)
  set(json "{\"name\": \"${name}\", \"file\": \"${rel}\", \"step\": ${number}, \"m\": ${m}, \"n\": ${n}, \"k\": ${k}, \"sms\": ${V_SMS}, \"seeds\": [${seeds}], \"expect\": ${expect_json}}")
  string(JSON checked ERROR_VARIABLE bad TYPE "${json}")  # a manifest the runner can read, or stop here
  if(bad)
    message(FATAL_ERROR "gemm_add_step_variant(${name}): its GPU manifest is not JSON: ${bad}")
  endif()
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/variants/${name}_gpu.json.tmp" "${json}\n")
  configure_file("${CMAKE_CURRENT_BINARY_DIR}/variants/${name}_gpu.json.tmp" "${out_dir}/${name}.json" COPYONLY)
endfunction()

# The libraries of a LIBRARY copy (see gemm_add_step_variant): the emulated object and, where the
# build has the track, the GPU object. Reads V_STEP and V_TRACK of the caller.
function(_gemm_step_copy_libraries name copy rel)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/variants")
  set(tu "${out_dir}/${name}_emu.cpp")
  file(CONFIGURE OUTPUT "${tu}" CONTENT
"// Generated by cmake/GemmVariant.cmake: ${name}, a copy of ${rel} for tests, compiled as host C++
// against the host prelude for the functional emulator (emu/).
#include \"emu/prelude.h\"
namespace gemm { inline namespace step_copy_${name} { namespace step${V_STEP} { namespace ${V_TRACK} {} } } }
#include \"${copy}\"
" @ONLY)
  add_library(step_copy_${name}_emu OBJECT "${tu}")
  target_link_libraries(step_copy_${name}_emu PRIVATE gemm_common)
  target_include_directories(step_copy_${name}_emu PRIVATE "${PROJECT_SOURCE_DIR}")
  target_compile_options(step_copy_${name}_emu PRIVATE ${GEMM_CXX_WARNINGS} -Wno-unknown-pragmas -Wno-psabi)
  if((V_TRACK STREQUAL "hopper" AND GEMM_HOPPER) OR (V_TRACK STREQUAL "blackwell" AND GEMM_BLACKWELL))
    set(gpu_tu "${out_dir}/${name}_gpu.cu")
    file(CONFIGURE OUTPUT "${gpu_tu}" CONTENT
"// Generated by cmake/GemmVariant.cmake: ${name}, a copy of ${rel} for tests, its GPU build.
namespace gemm { inline namespace step_copy_${name}_gpu { namespace step${V_STEP} { namespace ${V_TRACK} {} } } }
#include \"${copy}\"
" @ONLY)
    add_library(step_copy_${name}_gpu OBJECT "${gpu_tu}")
    if(V_TRACK STREQUAL "hopper")
      set_target_properties(step_copy_${name}_gpu PROPERTIES CUDA_ARCHITECTURES 90a)
    else()
      set_target_properties(step_copy_${name}_gpu PROPERTIES CUDA_ARCHITECTURES "${GEMM_BLACKWELL_ARCHS}")
    endif()
    target_link_libraries(step_copy_${name}_gpu PUBLIC gemm_common)
    target_include_directories(step_copy_${name}_gpu PRIVATE "${PROJECT_SOURCE_DIR}")
    target_compile_options(step_copy_${name}_gpu PRIVATE ${GEMM_CUDA_WARNINGS})
  endif()
endfunction()

# `text` as a JSON string literal, quotes included.
function(_gemm_json_string text out)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  string(REPLACE "\t" "\\t" text "${text}")
  string(REPLACE "\r" "\\r" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

# The position of the one occurrence of `needle` in `text`; fails (saying `what`) if there is not
# exactly one.
function(_gemm_variant_find_once text needle what out)
  string(FIND "${text}" "${needle}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "${what}: not found (has the step changed?):\n${needle}")
  endif()
  string(FIND "${text}" "${needle}" last REVERSE)
  if(NOT last EQUAL pos)
    message(FATAL_ERROR "${what}: found more than once: make it longer:\n${needle}")
  endif()
  set(${out} ${pos} PARENT_SCOPE)
endfunction()

# Lines in `text` (its line breaks).
function(_gemm_variant_count_lines text out)
  string(REGEX MATCHALL "\n" breaks "${text}")
  list(LENGTH breaks count)
  set(${out} ${count} PARENT_SCOPE)
endfunction()

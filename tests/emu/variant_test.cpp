// The single-bug variants of real steps (cmake/GemmVariant.cmake, tests/emu/variants.cmake): each
// must fail on the emulator, with every emulator seed it lists, with a message that its EXPECT
// regex matches: the rule, the step file and line, the cause. Label emu (and variant).
// GEMM_EMU_SHOW=1 prints every message.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/hash.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "tests/emu/variant_registry.h"

namespace gemm::test {

namespace {
std::vector<VariantInfo>& registry() {
  static std::vector<VariantInfo> v;
  return v;
}
}  // namespace

bool register_variant(VariantInfo info) {
  registry().push_back(std::move(info));
  return true;
}

const std::vector<VariantInfo>& variants() { return registry(); }

void PrintTo(const VariantInfo& v, std::ostream* os) { *os << v.name; }

namespace {

class Variant : public ::testing::TestWithParam<VariantInfo> {};

TEST_P(Variant, FailsWithItsRule) {
  const VariantInfo& v = GetParam();
  for (uint64_t seed : v.seeds) {
    SCOPED_TRACE("variant " + std::string(v.name) + " of " + v.file + ", emulator seed " + std::to_string(seed));
    const std::unique_ptr<Backend> backend = make_emu_backend(EmuSettings{v.sms, seed});
    Problem shape{};
    shape.m = v.m;
    shape.n = v.n;
    shape.k = v.k;
    Operands ops(*backend, shape, 7, v.k <= kExactMaxK ? InputMode::exact_int : InputMode::float_uniform);
    CpuReference reference;
    const CheckOutcome out = run_and_check(*backend, v.run, ops, reference);
    ASSERT_FALSE(out.status.ok()) << "the variant ran without an emulator failure; D "
                                  << (out.result.ok ? "matched" : "differed: " + summary(out.result));
    // One line, each line break read as " | ": an EXPECT's [^|]* stays within a line of the message.
    std::string flat;
    for (char c : out.status.message()) flat += c == '\n' ? std::string(" | ") : std::string(1, c);
    if (std::getenv("GEMM_EMU_SHOW"))
      std::printf("--- %s (seed %llu)\n%s\n", v.name, static_cast<unsigned long long>(seed),
                  out.status.message().c_str());
    EXPECT_TRUE(std::regex_search(flat, std::regex(v.expect))) << "expected a match of\n  " << v.expect << "\nin:\n"
                                                               << out.status.message();
  }
}

std::string variant_name(const ::testing::TestParamInfo<VariantInfo>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Variants, Variant, ::testing::ValuesIn(variants()), variant_name);

}  // namespace
}  // namespace gemm::test

// The LSSA / LSSAR row arithmetic (model/src/lssa_rows.hpp) gives the same bits on every instruction set the
// kernel is built for, and the kernel's tensors are those rows: a run is reproduced exactly on another x86-64
// machine, and a sweep split over machines merges into the single machine's results.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lssa_rows_builds.hpp"
#include "orbitlaw/model/lssa_cpu_kernel.hpp"

namespace orbitlaw::model::testing {
namespace {

// A row's forward results and gradient, each buffer placed `shift` floats past the start of its allocation.
struct RowResults {
  std::vector<float> lssa, sig, out, stats, ds;
};

RowResults run(const RowsBuild& build, const RowCase& row, const std::vector<float>& s,
               const std::vector<float>& grad, std::size_t shift) {
  const auto keys = static_cast<std::size_t>(row.keys);
  std::vector<float> in(keys + shift), g(keys + shift), lssa(keys + shift), sig(keys + shift),
      out(keys + shift), ds(keys + shift), stats(4 + shift);
  std::copy(s.begin(), s.end(), in.begin() + shift);
  std::copy(grad.begin(), grad.end(), g.begin() + shift);
  build.forward(in.data() + shift, lssa.data() + shift, sig.data() + shift, out.data() + shift,
                stats.data() + shift, row);
  build.backward(g.data() + shift, lssa.data() + shift, sig.data() + shift, out.data() + shift,
                 stats.data() + shift, ds.data() + shift, row);
  auto tail = [shift](const std::vector<float>& v) { return std::vector<float>(v.begin() + shift, v.end()); };
  return {tail(lssa), tail(sig), tail(out), tail(stats), tail(ds)};
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void expect_same(const RowResults& got, const RowResults& want, const std::string& where) {
  EXPECT_TRUE(same_bits(got.lssa, want.lssa)) << where << ": LSSA weights";
  EXPECT_TRUE(same_bits(got.sig, want.sig)) << where << ": sigmoid";
  EXPECT_TRUE(same_bits(got.out, want.out)) << where << ": output";
  EXPECT_TRUE(same_bits(got.stats, want.stats)) << where << ": row scalars";
  EXPECT_TRUE(same_bits(got.ds, want.ds)) << where << ": gradient";
}

// Rows of every length around the vector widths (4, 8 and 16 floats), full and with keys the row does not
// see, LSSA and LSSAR at integral and fractional p, some rows so flat that LSSAR's cut-off zeroes them.
std::vector<RowCase> row_cases() {
  std::vector<RowCase> cases;
  for (const std::int64_t visible : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 128, 130}) {
    for (const std::int64_t hidden : {0, 5}) {
      for (const auto& [reweight, p] : {std::pair{false, 15.0}, {true, 15.0}, {true, 3.0}, {true, 2.5}}) {
        cases.push_back({.absolute = visible - 1, .keys = visible + hidden, .reweight = reweight, .p = p});
      }
    }
  }
  return cases;
}

std::vector<std::pair<std::string, RowsBuild>> builds_this_cpu_runs() {
  std::vector<std::pair<std::string, RowsBuild>> builds;
#ifdef ORBITLAW_TEST_ROW_BUILDS_X86
  if (__builtin_cpu_supports("avx2")) builds.emplace_back("AVX2", rows_avx2());
  if (__builtin_cpu_supports("avx512f")) builds.emplace_back("AVX-512", rows_avx512());
#endif
  return builds;
}

TEST(LssaRows, EveryInstructionSetGivesTheBaselineBits) {
  const auto builds = builds_this_cpu_runs();
  if (builds.empty()) GTEST_SKIP() << "no AVX2 or AVX-512 build on this machine: nothing to compare";
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  int compared = 0, cut_off = 0;
  for (const RowCase& row : row_cases()) {
    for (const bool flat : {false, true}) {
      std::vector<float> s(static_cast<std::size_t>(row.keys)), grad(s.size());
      for (auto& x : s) x = flat ? 0.25f + 1e-4f * unit(rng) : unit(rng);
      for (auto& x : grad) x = unit(rng);
      const RowResults want = run(rows_baseline(), row, s, grad, 0);
      cut_off += row.reweight && want.stats[3] == 0;
      for (const auto& [name, build] : builds) {
        for (const std::size_t shift : {0, 1, 3, 7}) {
          expect_same(run(build, row, s, grad, shift), want,
                      name + " against the baseline, " + std::to_string(row.absolute + 1) + " visible of " +
                          std::to_string(row.keys) + " keys, " + (row.reweight ? "LSSAR p " : "LSSA ") +
                          (row.reweight ? std::to_string(row.p) : "") + (flat ? ", flat" : "") + ", shift " +
                          std::to_string(shift));
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(cut_off, 10);  // the cut-off's branch was compared too
  EXPECT_GE(compared, 4 * 2 * static_cast<int>(row_cases().size()));
}

// The kernel's tensors, through whichever build the CPU dispatches to, are the baseline build's rows.
TEST(LssaRows, TheKernelGivesTheBaselineBuildsRows) {
  const std::int64_t t = 37, heads = 2, head_dim = 16;
  torch::manual_seed(3);
  const auto dots = (torch::rand({1, heads, t, t}) * 2 - 1).requires_grad_(true);
  const auto grad = torch::randn({1, heads, t, t});
  for (const auto& [reweight, p] : {std::pair{false, 15.0}, {true, 15.0}, {true, 2.5}}) {
    const LssaRowsSpec spec{head_dim, 0, reweight, p, 3};
    if (dots.grad().defined()) dots.grad().zero_();
    const auto weights = lssa_cpu_weights(dots, spec);
    weights.backward(grad);
    const auto w = weights.detach().contiguous(), ds = dots.grad().contiguous();
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < t; ++i) {
        const RowCase row{.absolute = i, .keys = t, .head_dim = head_dim, .reweight = reweight, .p = p};
        const auto at = [&](const torch::Tensor& x) {
          const float* begin = x.data_ptr<float>() + (h * t + i) * t;
          return std::vector<float>(begin, begin + t);
        };
        const RowResults want = run(rows_baseline(), row, at(dots.detach().contiguous()), at(grad), 0);
        const std::string where = std::string(reweight ? "LSSAR" : "LSSA") + " p " + std::to_string(p) +
                                  " head " + std::to_string(h) + " row " + std::to_string(i);
        EXPECT_TRUE(same_bits(at(w), reweight ? want.out : want.lssa)) << where;
        EXPECT_TRUE(same_bits(at(ds), want.ds)) << where;
      }
    }
  }
}

}  // namespace
}  // namespace orbitlaw::model::testing

// The paged-attention tasks (FlashInfer-Bench's gqa_paged definitions): their
// inputs as the engine draws them and their CPU reference, checked against an
// attention written here another way (the log-sum-exp first, then the
// weights from it), query by query, on the test shape.

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "eval/calls.h"
#include "eval/draw.h"
#include "eval/expected.h"
#include "eval/streaming.h"
#include "suite/task.h"
#include "testing/cpu_test_target.h"

namespace accelopt {
namespace {

// One input set laid out by name.
std::map<std::string, const float*> ByName(const suite::BoundTask& bound, const float* set) {
  std::map<std::string, const float*> out;
  for (const auto& t : bound.inputs) {
    out[t.name] = set;
    set += t.elements;
  }
  return out;
}

struct Row {
  std::vector<double> out;
  double lse2 = 0;
};

// Attention of one query row over kv positions [0, seen) of a request whose
// pages start at kv_begin: the natural log-sum-exp first, then each weight
// as exp(s - lse).
Row Attend(const suite::BoundTask& bound, std::map<std::string, const float*>& in, long row, long head, long kv_begin,
           long seen) {
  const long H = static_cast<long>(bound.params.at("num_qo_heads"));
  const long KH = static_cast<long>(bound.params.at("num_kv_heads"));
  const long D = static_cast<long>(bound.params.at("head_dim"));
  const long kh = head / (H / KH);
  const double scale = in["sm_scale"][0];
  std::vector<double> s(static_cast<size_t>(seen));
  for (long j = 0; j < seen; ++j) {
    const long page = static_cast<long>(in["kv_indices"][kv_begin + j]);
    double dot = 0;
    for (long d = 0; d < D; ++d)
      dot += double(in["q"][(row * H + head) * D + d]) * in["k_cache"][(page * KH + kh) * D + d];
    s[j] = dot * scale;
  }
  double top = s[0];
  for (double x : s) top = std::max(top, x);
  double total = 0;
  for (double x : s) total += std::exp(x - top);
  const double lse = top + std::log(total);
  Row r{std::vector<double>(static_cast<size_t>(D), 0.0), lse / std::log(2.0)};
  for (long j = 0; j < seen; ++j) {
    const long page = static_cast<long>(in["kv_indices"][kv_begin + j]);
    for (long d = 0; d < D; ++d) r.out[d] += std::exp(s[j] - lse) * in["v_cache"][(page * KH + kh) * D + d];
  }
  return r;
}

class PagedAttention : public ::testing::TestWithParam<std::string> {};

TEST_P(PagedAttention, ReferenceAgreesWithAnIndependentAttentionOnDrawnInputs) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/" + GetParam());
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->fib_definition, GetParam());
  EXPECT_TRUE(task->Bf16Inputs());
  auto bound = suite::Bind(*task, "test");
  ASSERT_TRUE(bound) << bound.error().message;
  testing::TempDir scratch;
  const cpu::CpuTargetOptions options = testing::TestTargetOptions(scratch);
  eval::Expected expected(*bound, cpu::ReferenceOptionsOf(options), scratch.path(), 2, 1.0, 1);
  ASSERT_TRUE(expected.status()) << expected.status().error().message;
  ASSERT_NE(expected.reference32(0), nullptr) << expected.float32_missing();

  const bool prefill = GetParam().find("prefill") != std::string::npos;
  const long H = static_cast<long>(bound->params.at("num_qo_heads"));
  const long D = static_cast<long>(bound->params.at("head_dim"));
  const long requests = static_cast<long>(bound->params.at("len_indptr")) - 1;
  // The drawn sets, then the checked call's inputs as a target derives them:
  // its random inputs perturbed, its page tables drawn afresh.
  std::vector<std::vector<float>> sets;
  for (size_t s = 0; s < expected.seeds(); ++s)
    sets.emplace_back(expected.set(s), expected.set(s) + eval::ElementsPerSet(bound->inputs));
  for (size_t k = 0; k < expected.checked_count(); ++k) {
    std::vector<float> derived(sets.front().size());
    const float* base = expected.set(expected.checked(k).set);
    long at = 0;
    for (size_t i = 0; i < bound->inputs.size(); at += bound->inputs[i].elements, ++i)
      eval::DeriveInput(bound->inputs[i], base + at, derived.data() + at, 0, bound->inputs[i].elements,
                        expected.checked(k).seed, i);
    eval::StreamFence();
    EXPECT_NE(derived, std::vector<float>(base, base + derived.size()));
    sets.push_back(std::move(derived));
  }
  for (size_t slot = 0; slot < sets.size(); ++slot) {
    auto in = ByName(*bound, sets[slot].data());
    const long rows = bound->outputs[0].elements / (H * D);
    const double* output = expected.reference(slot);
    const double* lse = output + bound->outputs[0].elements;
    long checked = 0;
    for (long b = 0; b < requests; ++b) {
      const long kv_begin = static_cast<long>(in["kv_indptr"][b]);
      const long kv_len = static_cast<long>(in["kv_indptr"][b + 1]) - kv_begin;
      ASSERT_GE(kv_len, 1) << "every request holds a page";
      const long q_begin = prefill ? static_cast<long>(in["qo_indptr"][b]) : b;
      const long q_len = prefill ? static_cast<long>(in["qo_indptr"][b + 1]) - q_begin : 1;
      ASSERT_LE(q_len, kv_len) << "a request's queries are among its pages";
      for (long i = 0; i < q_len; ++i)
        for (long h = 0; h < H; h += 7) {
          const long row = q_begin + i;
          ASSERT_LT(row, rows);
          const Row want = Attend(*bound, in, row, h, kv_begin, std::min(kv_len, i + kv_len - q_len + 1));
          EXPECT_NEAR(lse[row * H + h], want.lse2, 1e-9 * (1 + std::fabs(want.lse2))) << b << " " << i << " " << h;
          for (long d = 0; d < D; ++d)
            ASSERT_NEAR(output[(row * H + h) * D + d], want.out[d], 1e-9) << b << " " << i << " " << h << " " << d;
          ++checked;
        }
    }
    EXPECT_GT(checked, 0);
  }
}

// The inputs of a call checked after it ran (a set perturbed by a fresh
// seed, its page tables drawn afresh) get their reference then: the same
// outputs as when the reference ran on them beforehand, in new slots after
// those there were.
TEST_P(PagedAttention, ReferenceRunAfterwardsForACheckedCallAgreesWithBeforehand) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/" + GetParam());
  ASSERT_TRUE(task) << task.error().message;
  auto bound = suite::Bind(*task, "test");
  ASSERT_TRUE(bound) << bound.error().message;
  testing::TempDir scratch;
  const cpu::CpuTargetOptions options = testing::TestTargetOptions(scratch);
  eval::Expected expected(*bound, cpu::ReferenceOptionsOf(options), scratch.path(), 2, 1.0, 2);
  ASSERT_TRUE(expected.status()) << expected.status().error().message;
  const size_t before = expected.seeds() + expected.checked_count();
  auto first = expected.AddSlots(*bound, {expected.checked(1), expected.checked(0), {1, 12345}});
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(*first, before);
  const long n = eval::ElementsPerSet(bound->outputs);
  for (size_t k = 0; k < 2; ++k) {
    const size_t beforehand = expected.seeds() + (1 - k), afterwards = *first + k;
    EXPECT_EQ(std::vector<double>(expected.reference(beforehand), expected.reference(beforehand) + n),
              std::vector<double>(expected.reference(afterwards), expected.reference(afterwards) + n));
    ASSERT_NE(expected.reference32(afterwards), nullptr) << expected.float32_missing();
  }
  // A seed no call had before: outputs of its own.
  EXPECT_NE(std::vector<double>(expected.reference(*first + 2), expected.reference(*first + 2) + n),
            std::vector<double>(expected.reference(expected.seeds() + 1), expected.reference(expected.seeds() + 1) + n));
}

INSTANTIATE_TEST_SUITE_P(All, PagedAttention,
                         ::testing::Values("gqa_paged_decode_h32_kv4_d128_ps1", "gqa_paged_decode_h32_kv8_d128_ps1",
                                           "gqa_paged_prefill_causal_h32_kv4_d128_ps1",
                                           "gqa_paged_prefill_causal_h32_kv8_d128_ps1"));

}  // namespace
}  // namespace accelopt

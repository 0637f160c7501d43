// Paged grouped-query attention for prefill with a causal mask
// (FlashInfer-Bench gqa_paged_prefill_causal), in double. Query i of a request
// with q_len queries and kv_len pages sees kv positions j <= i + kv_len - q_len.
// Every input arrives as float32 values: the bf16 ones exactly, the offsets
// and page ids as whole numbers.
//
// Arranged so that it takes seconds at the gpu shape: per request and kv head,
// the keys and values are gathered once in page order (as double), every query
// head of the group reads them together, and each dot product sums in eight
// independent lanes (the same arithmetic in double; the float32 evaluation
// made from this source sums in the same order).
#include <cmath>
#include <vector>

static_assert(page_size == 1, "pages of one token: a page id is a token's row in the cache");

namespace {

constexpr long kLanes = 8;
static_assert(head_dim % kLanes == 0, "head_dim a multiple of the lanes of a dot product");

double Dot(const double* a, const double* b) {
  double lane[kLanes] = {};
  for (long d = 0; d < head_dim; d += kLanes)
    for (long u = 0; u < kLanes; ++u) lane[u] += a[d + u] * b[d + u];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace

extern "C" void reference(const float* q, const float* k_cache, const float* v_cache, const float* qo_indptr,
                          const float* kv_indptr, const float* kv_indices, const float* sm_scale, double* output,
                          double* lse) {
  const long group = num_qo_heads / num_kv_heads;
  const double scale = sm_scale[0];
  std::vector<double> keys, values, queries(group * head_dim), p, acc(group * head_dim);
  std::vector<double> mx(group), sum(group);
  for (long b = 0; b + 1 < len_indptr; ++b) {
    const long q_begin = (long)qo_indptr[b], q_len = (long)qo_indptr[b + 1] - q_begin;
    const long kv_begin = (long)kv_indptr[b], kv_len = (long)kv_indptr[b + 1] - kv_begin;
    const long rows = kv_len > 0 ? kv_len : 1;
    keys.assign(rows * head_dim, 0.0);
    values.assign(rows * head_dim, 0.0);
    p.assign(group * rows, 0.0);
    for (long kh = 0; kh < num_kv_heads; ++kh) {
      for (long j = 0; j < kv_len; ++j) {
        const long at = ((long)kv_indices[kv_begin + j] * num_kv_heads + kh) * head_dim;
        for (long d = 0; d < head_dim; ++d) {
          keys[j * head_dim + d] = k_cache[at + d];
          values[j * head_dim + d] = v_cache[at + d];
        }
      }
      for (long i = 0; i < q_len; ++i) {
        const long seen = std::min(kv_len, i + kv_len - q_len + 1);  // positions 0 .. seen-1
        const long row0 = (q_begin + i) * num_qo_heads + kh * group;  // the group's first query head
        for (long g = 0; g < group; ++g) {
          double* o = output + (row0 + g) * head_dim;
          for (long d = 0; d < head_dim; ++d) o[d] = 0.0;
          if (seen <= 0) lse[row0 + g] = -INFINITY;  // nothing visible: FlashInfer-Bench leaves zeros and -inf
        }
        if (seen <= 0) continue;
        for (long x = 0; x < group * head_dim; ++x) queries[x] = q[row0 * head_dim + x];
        for (long g = 0; g < group; ++g) mx[g] = -INFINITY;
        for (long j = 0; j < seen; ++j) {
          const double* k = &keys[j * head_dim];
          for (long g = 0; g < group; ++g) {
            const double s = Dot(&queries[g * head_dim], k) * scale;
            p[g * rows + j] = s;
            mx[g] = std::max(mx[g], s);
          }
        }
        for (long g = 0; g < group; ++g) {
          double total = 0.0;
          for (long j = 0; j < seen; ++j) {
            p[g * rows + j] = std::exp(p[g * rows + j] - mx[g]);
            total += p[g * rows + j];
          }
          sum[g] = total;
        }
        for (long x = 0; x < group * head_dim; ++x) acc[x] = 0.0;
        for (long j = 0; j < seen; ++j) {
          const double* v = &values[j * head_dim];
          for (long g = 0; g < group; ++g) {
            const double w = p[g * rows + j] / sum[g];
            double* a = &acc[g * head_dim];
            for (long d = 0; d < head_dim; ++d) a[d] += w * v[d];
          }
        }
        for (long g = 0; g < group; ++g) {
          double* o = output + (row0 + g) * head_dim;
          for (long d = 0; d < head_dim; ++d) o[d] = acc[g * head_dim + d];
          lse[row0 + g] = (mx[g] + std::log(sum[g])) / std::log((double)2.0);
        }
      }
    }
  }
}

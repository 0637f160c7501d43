// Paged grouped-query attention for prefill with a causal mask
// (FlashInfer-Bench gqa_paged_prefill_causal), in double. Query i of a request
// with q_len queries and kv_len pages sees kv positions j <= i + kv_len - q_len.
// Every input arrives as float32 values: the bf16 ones exactly, the offsets
// and page ids as whole numbers.
#include <cmath>
#include <vector>

static_assert(page_size == 1, "pages of one token: a page id is a token's row in the cache");

extern "C" void reference(const float* q, const float* k_cache, const float* v_cache, const float* qo_indptr,
                          const float* kv_indptr, const float* kv_indices, const float* sm_scale, double* output,
                          double* lse) {
  const long group = num_qo_heads / num_kv_heads;
  const double scale = sm_scale[0];
  std::vector<double> p;
  for (long b = 0; b + 1 < len_indptr; ++b) {
    const long q_begin = (long)qo_indptr[b], q_len = (long)qo_indptr[b + 1] - q_begin;
    const long kv_begin = (long)kv_indptr[b], kv_len = (long)kv_indptr[b + 1] - kv_begin;
    p.assign(kv_len > 0 ? kv_len : 1, 0.0);
    for (long i = 0; i < q_len; ++i) {
      const long seen = std::min(kv_len, i + kv_len - q_len + 1);  // positions 0 .. seen-1
      for (long h = 0; h < num_qo_heads; ++h) {
        const long kh = h / group;
        const long row = (q_begin + i) * num_qo_heads + h;
        const float* qh = q + row * head_dim;
        double* o = output + row * head_dim;
        for (long d = 0; d < head_dim; ++d) o[d] = 0.0;
        if (seen <= 0) {  // nothing visible: FlashInfer-Bench leaves zeros and -inf
          lse[row] = -INFINITY;
          continue;
        }
        double mx = -INFINITY;
        for (long j = 0; j < seen; ++j) {
          const float* k = k_cache + ((long)kv_indices[kv_begin + j] * num_kv_heads + kh) * head_dim;
          double s = 0.0;
          for (long d = 0; d < head_dim; ++d) s += (double)qh[d] * k[d];
          p[j] = s * scale;
          mx = std::max(mx, p[j]);
        }
        double sum = 0.0;
        for (long j = 0; j < seen; ++j) {
          p[j] = std::exp(p[j] - mx);
          sum += p[j];
        }
        for (long j = 0; j < seen; ++j) {
          const float* v = v_cache + ((long)kv_indices[kv_begin + j] * num_kv_heads + kh) * head_dim;
          const double w = p[j] / sum;
          for (long d = 0; d < head_dim; ++d) o[d] += w * v[d];
        }
        lse[row] = (mx + std::log(sum)) / std::log((double)2.0);
      }
    }
  }
}

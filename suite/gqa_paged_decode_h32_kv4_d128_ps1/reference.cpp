// Paged grouped-query attention for decode (FlashInfer-Bench gqa_paged_decode),
// in double. Every input arrives as float32 values: the bf16 ones exactly, the
// offsets and page ids as whole numbers.
#include <cmath>
#include <vector>

static_assert(page_size == 1, "pages of one token: a page id is a token's row in the cache");

extern "C" void reference(const float* q, const float* k_cache, const float* v_cache, const float* kv_indptr,
                          const float* kv_indices, const float* sm_scale, double* output, double* lse) {
  const long group = num_qo_heads / num_kv_heads;
  const double scale = sm_scale[0];
  std::vector<double> p;
  for (long b = 0; b < batch_size; ++b) {
    const long begin = (long)kv_indptr[b], end = (long)kv_indptr[b + 1];
    p.assign(end - begin, 0.0);
    for (long h = 0; h < num_qo_heads; ++h) {
      const long kh = h / group;
      const float* qh = q + (b * num_qo_heads + h) * head_dim;
      double* o = output + (b * num_qo_heads + h) * head_dim;
      for (long d = 0; d < head_dim; ++d) o[d] = 0.0;
      if (begin == end) {  // no pages: FlashInfer-Bench leaves zeros and -inf
        lse[b * num_qo_heads + h] = -INFINITY;
        continue;
      }
      double mx = -INFINITY;
      for (long j = begin; j < end; ++j) {
        const float* k = k_cache + ((long)kv_indices[j] * num_kv_heads + kh) * head_dim;
        double s = 0.0;
        for (long d = 0; d < head_dim; ++d) s += (double)qh[d] * k[d];
        p[j - begin] = s * scale;
        mx = std::max(mx, p[j - begin]);
      }
      double sum = 0.0;
      for (long j = begin; j < end; ++j) {
        p[j - begin] = std::exp(p[j - begin] - mx);
        sum += p[j - begin];
      }
      for (long j = begin; j < end; ++j) {
        const float* v = v_cache + ((long)kv_indices[j] * num_kv_heads + kh) * head_dim;
        const double w = p[j - begin] / sum;
        for (long d = 0; d < head_dim; ++d) o[d] += w * v[d];
      }
      lse[b * num_qo_heads + h] = (mx + std::log(sum)) / std::log((double)2.0);
    }
  }
}

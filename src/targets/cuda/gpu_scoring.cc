#include "targets/cuda/gpu_scoring.h"

#include "core/clock.h"

namespace accelopt::cuda {
namespace {

// The GEMM figure the matmul term divides by.
const GpuFigure& MatmulFigure(const GpuHardwareProfile& h, bool bf16_inputs) {
  return bf16_inputs && h.bf16_gemm.measured > 0 ? h.bf16_gemm : h.fp32_gemm;
}

}  // namespace

bool InputsAreBf16(const suite::BoundTask& bound) { return bound.task->Bf16Inputs(); }

suite::PeakRates RatesFor(const GpuHardwareProfile& h, bool bf16_inputs) {
  return {h.hbm.measured, MatmulFigure(h, bf16_inputs).measured, h.fp32_fma.measured};
}

eval::ScoringPeaks PeaksFor(const GpuHardwareProfile& h, bool bf16_inputs) {
  const GpuFigure& mm = MatmulFigure(h, bf16_inputs);
  eval::ScoringPeaks peaks;
  peaks.rates = RatesFor(h, bf16_inputs);
  peaks.theoretical = {h.hbm.theoretical, mm.theoretical, h.fp32_fma.theoretical};
  peaks.spreads = {{"bandwidth", h.hbm.spread}, {"peak_mm", mm.spread}, {"peak_vec", h.fp32_fma.spread}};
  peaks.calibrated = true;
  peaks.fingerprint = h.machine;
  peaks.measured_at = h.measured_at;
  return peaks;
}

std::vector<eval::PeakEvidence> EvidenceOf(const std::vector<eval::ProvedRate>& proved, const std::string& kernel_hash,
                                           const std::string& task, const std::string& shape) {
  std::vector<eval::PeakEvidence> out;
  for (const eval::ProvedRate& p : proved)
    out.push_back({p.figure, p.value, p.previous, kernel_hash, task, shape, IsoUtcNow()});
  return out;
}

Status ScoreOnGpu(const suite::BoundTask& bound, const std::string& kernel_hash, const GpuHardwareProfile& hardware,
                  Profile& profile, const std::function<Status(Profile& again)>& measure_again,
                  const std::function<void(const eval::PeakEvidence&)>& on_evidence) {
  // A roofline the task loader accepted evaluates; if not, that is the engine's error, never a silent 0%.
  auto counts = suite::CountRoofline(bound);
  if (!counts) return counts.error();
  const eval::ScoringPeaks peaks = PeaksFor(hardware, InputsAreBf16(bound));
  auto proved = eval::ScoreMeasuringAgainBeyondPeak(*counts, peaks, profile, measure_again);
  if (!proved) return proved.error();
  if (on_evidence)
    for (const eval::PeakEvidence& e : EvidenceOf(*proved, kernel_hash, profile.task, profile.shape)) on_evidence(e);
  return Ok{};
}

}  // namespace accelopt::cuda

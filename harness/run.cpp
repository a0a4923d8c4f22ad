#include "harness/run.h"

namespace gemm {

StepTarget find_step_target(const StepInfo& info, TrackRequest requested) {
  StepTarget target;
  std::string why;
  if (!gpu_available(&why)) {
    target.status = Status::failure(why);
    return target;
  }
  target.device = query_device(0);
  const TrackSelection sel = select_track(target.device.cc_major, target.device.cc_minor, requested, info);
  target.status = sel.status;
  target.track = sel.track;
  target.launcher = sel.launcher;
  return target;
}

Operands::Operands(Backend& backend, const Shape& shape, uint64_t seed, InputMode mode)
    : shape(shape),
      seed(seed),
      mode(mode),
      a(backend, static_cast<size_t>(shape.m * shape.k)),
      b(backend, static_cast<size_t>(shape.n * shape.k)),
      d(backend, static_cast<size_t>(shape.m * shape.n)) {
  backend.fill(a.get(), a.size(), operand_seed(seed, Operand::a), mode);
  backend.fill(b.get(), b.size(), operand_seed(seed, Operand::b), mode);
  d.poison();
}

Problem Operands::problem() const { return Problem{shape, a.get(), b.get(), d.d()}; }

CheckOutcome run_and_check(Backend& backend, StepFn step, Operands& ops, Reference& reference) {
  CheckOutcome out;
  ops.d.poison();
  out.status = backend.run(step, ops.problem());
  if (!out.status.ok()) return out;
  const std::vector<__half> got = ops.d.to_host();
  const std::vector<__half> want = reference.expected(backend, ops.problem());
  out.result = compare(got, ops.d.guard, want, ops.shape.m, ops.shape.n, ops.mode);
  return out;
}

}  // namespace gemm

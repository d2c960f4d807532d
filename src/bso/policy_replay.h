// Copyright 2026 The Zeus C++ Authors.
//
// The Zeus batch-size policy (zeus::optimizer) replayed over a job's stored
// state: the service keeps no policy object between requests. The next
// trial comes from PruningExplorer replayed over the stored explorations,
// then from ThompsonChoose over the stored arms with the generator resumed
// from its stored state; a report is judged against the job's target, epoch
// budget and early-stopping bound. See service.h for where the behaviour
// differs from the original (W8).
//
// Each function runs in the caller's transaction. Internal to the service.

#ifndef ZEUS_SRC_BSO_POLICY_REPLAY_H_
#define ZEUS_SRC_BSO_POLICY_REPLAY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "bso/arm_statistics.h"
#include "bso/job_store.h"
#include "bso/sql/sql_connection.h"
#include "zeus/base/error.h"
#include "zeus/bso/models.h"

namespace zeus::bso {

// What the job's arms need of it (its policy applied to its bandit options).
ArmJob ArmJobOf(const JobRow& job);

// The cost of a run (optimizer::ZeusCost under the job's eta_knob and
// max_power).
double TrialCost(const JobRow& job, double energy, double time);

// The job's next trial, created (job_store.h CreateTrial) with its state
// saved:
//   * bandit stage: ThompsonChoose over the stored arms (a pooled variance
//     model refits them from their stored moments), drawing from the job's
//     generator, whose new state is stored;
//   * pruning: first the dispatched explorations last heard of (dispatched
//     or reported) before stale_before_us (when set) are marked failed at
//     job.now_us; then the explorer is replayed over the explorations that
//     did not fail. While one is still running, a Concurrent trial at the
//     best known batch size; else the explorer's next exploration; when
//     pruning is over, the bandit is built over the survivors
//     (arm_statistics.h RefitArm) and Thompson sampling starts.
// kFailedPrecondition when pruning ended with no converged batch size, or an
// arm's fit is not finite (only a job stored before reports and priors were
// bounded); kInternal for stored explorations the explorer rejects.
Result<TrialId> NextTrial(SqlConnection& c, JobRow& job, std::optional<std::int64_t> stale_before_us);

// What a report of a run that cost `cost` means for its trial.
struct ReportDecision {
  bool stop = false;  // false: keep training (the rest is unset)
  bool converged = false;
  std::string message;  // the original server's words
};
// Stops when the target is reached, the cost passes beta_knob x the job's
// minimum cost, max_epochs is reached, or the client finished; converged
// when the target was reached within the cost bound.
ReportDecision DecideReport(const JobRow& job, const TrainingResult& result, double cost);

}  // namespace zeus::bso

#endif  // ZEUS_SRC_BSO_POLICY_REPLAY_H_

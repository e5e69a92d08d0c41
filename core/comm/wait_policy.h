// How Sluice's own waits for other ranks use the core while they wait (config key comm.wait). A waiting rank
// that spins competes with the simulation's solver and with its peers for the node's cores; one that sleeps
// answers a little later. The choice is the caller's (spin | yield | block | adaptive), or `auto`: block when
// the node's ranks outnumber the cores they may run on, adaptive otherwise.
#pragma once

#include <string>
#include <vector>

#include "core/config/wait_policy.h"

namespace sluice::comm {

// The enum and its names are the config vocabulary (core/config/wait_policy.h).
using WaitPolicy = config::WaitPolicy;

// The names config files use, in enum order: auto, spin, yield, block, adaptive.
const std::vector<std::string>& wait_policy_names();
std::string wait_policy_name(WaitPolicy policy);

// `auto`'s rule, a pure function: kBlock when `ranks_on_node` > `cores_available` (every polling rank then
// takes a core a peer or the solver needs), kAdaptive otherwise (polls only around when recent waits of the same
// kind ended, so a rank that waits long and regularly for a busier peer leaves its core to the solver). A policy other than kAuto is returned unchanged.
// Counts below 1 are treated as 1.
WaitPolicy choose_wait_policy(WaitPolicy requested, int ranks_on_node, int cores_available);

// The cores this process may run on: its CPU affinity mask (what Slurm or mpirun --bind-to gives it), else
// std::thread::hardware_concurrency(), else 1.
int cores_available_to_this_process();

}  // namespace sluice::comm

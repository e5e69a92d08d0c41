// Turning a failure that one rank sees into the same failure on every rank. Sluice's steps are collective:
// if one rank threw while its peers went on into a message or a collective, they would wait forever. Every
// check that can fail on some ranks only is therefore run to completion locally, and then all ranks agree.
#pragma once

#include <exception>
#include <string>

#include "core/comm/collectives.h"

namespace sluice::runtime {

// Collective over `group`. Returns normally only if no rank has an error. Otherwise throws on every rank:
// the rank's own error if it has one, else an Error with the first failing rank's category saying that
// `what` failed on that rank (whose own message names the cause).
void agree_or_throw(comm::Group& group, const std::exception_ptr& error, const std::string& what);

}  // namespace sluice::runtime

// The settings every rank of a communicator must share (ParamScope::Agreed,
// core/params.h), compared when its context is set up (comm/context.cc).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "core/common.h"

namespace chorus {

// This process's Agreed settings, hashed (their canonical values): one
// field of the bootstrap's first exchange.
uint64_t agreedSettingsHash();

// Collective, on every rank once the hashes differed: exchange the values,
// name the first setting that differs with its values and the ranks holding
// each (and the names of any others), warn, and keep the text for
// contextSettingsDisagreement.  Returns InvalidArgument.
Status describeSettingsDisagreement(MPI_Comm comm, int nranks);
void clearSettingsDisagreement();

// Why this thread's last context set-up failed when the cause was settings
// that differ between ranks; "" after any other outcome.
const char *contextSettingsDisagreement();

}  // namespace chorus

#!/bin/sh
# Run a command as one rank of a multi-node layout played on one machine:
# sets CHORUS_HOSTID from this process's rank and CHORUS_TEST_LAYOUT.
#
#   CHORUS_TEST_LAYOUT=each     every rank its own node
#   CHORUS_TEST_LAYOUT=2x2      nodes of 2 consecutive ranks (any "N" after x: nodes of N)
#   CHORUS_TEST_LAYOUT=2+1+3    nodes of 2, 1 and 3 consecutive ranks
#   CHORUS_TEST_LAYOUT=mod2     round-robin over 2 nodes (rank % 2): the ring
#                               in rank order would cross on every hop
#
# The rank comes from the launcher's environment (Open MPI, MPICH/Hydra, PMIx).
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}
if [ -z "$rank" ]; then
  echo "hostid-wrap.sh: no rank in the environment (not started by mpirun?)" >&2
  exit 99
fi
layout=${CHORUS_TEST_LAYOUT:-each}
case $layout in
  each) node=$rank ;;
  mod*) node=$((rank % ${layout#mod})) ;;
  *x*) per=${layout#*x}; node=$((rank / per)) ;;
  *+*)
    node=0 first=0
    for size in $(echo "$layout" | tr '+' ' '); do
      if [ "$rank" -lt $((first + size)) ]; then break; fi
      first=$((first + size)) node=$((node + 1))
    done ;;
  *) echo "hostid-wrap.sh: unknown layout '$layout'" >&2; exit 99 ;;
esac
CHORUS_HOSTID=node$node
export CHORUS_HOSTID
exec "$@"

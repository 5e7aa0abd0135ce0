#!/bin/sh
# The Fortran test with 5 ranks (see run-fortran.sh).
exec "${srcdir:-.}/run-fortran.sh" 5

#!/bin/sh
# Strided array sections and Fortran type names, 2 ranks (test_sections.F90).
exec "${srcdir:-.}/run-fortran.sh" 2 test_sections

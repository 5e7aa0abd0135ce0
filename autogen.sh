#!/bin/sh
# autogen.sh - generate configure and the Makefile.in files from a checkout.
# Aux files (ltmain.sh, config.guess, ...) and libtool's m4 go to config/.
set -e
cd "`dirname "$0"`"
autoreconf --force --install --verbose -I config

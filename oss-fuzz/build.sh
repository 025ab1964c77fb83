#!/bin/bash -eu
# OSS-Fuzz's build script for harness: the repository's own, which ClusterFuzzLite runs too,
# so the two cannot drift. The working directory is the clone (WORKDIR in Dockerfile).
exec bash -eu .clusterfuzzlite/build.sh

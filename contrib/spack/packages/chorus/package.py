# Spack recipe for Chorus: GPU collectives beneath an MPI-style API.
#
#   spack repo add <chorus checkout>/contrib/spack
#   cd <chorus checkout> && spack dev-build chorus@main +cuda cuda_arch=90 +ucx +fortran
#
# Chorus has no public repository or release tarball yet, so the recipe
# builds the checkout it is run in (spack dev-build, or spack develop in an
# environment); a release adds its url and checksums here.
#
# Each variant maps to one configure option (README.md, "Two commands").

from spack.package import *


class Chorus(AutotoolsPackage, CudaPackage):
    """Collectives on GPU and host buffers for MPI programs: MPIX_*_gpu
    allreduce, reduce, broadcast, allgather, reduce-scatter, alltoall and
    barrier, with Chorus's own ring and tree algorithms and CUDA kernels over
    CUDA IPC inside a node and UCX between nodes."""

    version("main")

    variant("ucx", default=True, description="UCX transport between nodes (--with-ucx)")
    variant("fortran", default=True, description="Fortran module `use chorus` (--enable-fortran)")
    variant(
        "emulation",
        default=False,
        description="Run the CUDA kernels on the CPU emulation of CUDA, for testing "
        "without a GPU (--enable-cuda-emulation; excludes +cuda)",
    )

    conflicts("+emulation", when="+cuda", msg="the CUDA emulation replaces the CUDA toolkit")

    # A git checkout has no configure script: autogen.sh makes it.
    depends_on("autoconf", type="build")
    depends_on("automake", type="build")
    depends_on("libtool", type="build")
    depends_on("pkgconfig", type="build")

    depends_on("mpi")
    depends_on("hwloc@2:")
    depends_on("ucx@1.13:", when="+ucx")
    depends_on("cuda@12:", when="+cuda")
    # make check: the unit and multi-rank suites use Boost.Test.
    depends_on("boost+test", type="test")

    def autoreconf(self, spec, prefix):
        bash = which("bash")
        bash("./autogen.sh")

    def configure_args(self):
        spec = self.spec
        args = [
            "MPICC=" + spec["mpi"].mpicc,
            "MPICXX=" + spec["mpi"].mpicxx,
        ]
        args += self.with_or_without("ucx")  # found through pkg-config
        args += self.enable_or_disable("fortran")
        if spec.satisfies("+fortran"):
            args.append("MPIFC=" + spec["mpi"].mpifc)
        if spec.satisfies("+cuda"):
            args.append("--with-cuda=" + spec["cuda"].prefix)
            archs = spec.variants["cuda_arch"].value
            if archs and archs[0] != "none":
                gencode = " ".join(
                    "-gencode=arch=compute_{0},code=sm_{0}".format(a) for a in archs
                )
                newest = max(archs, key=int)
                gencode += " -gencode=arch=compute_{0},code=compute_{0}".format(newest)
                args.append("--with-nvcc-gencode=" + gencode)
        elif spec.satisfies("+emulation"):
            args.append("--enable-cuda-emulation")
        else:
            args.append("--without-cuda")
        return args

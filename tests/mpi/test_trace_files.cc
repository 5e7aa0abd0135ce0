// Trace files against hostile or broken surroundings (run-trace-files.sh
// plants what each mode needs and checks what is left afterwards).  One
// PASS or FAIL line per rank.  Modes:
//   refuse   MPIX_Comm_gpu_trace_dump must fail, its error naming the cause
//            given in TEST_EXPECT_<rank> (a link, a FIFO or another user's
//            file at the path, or a name too long): nothing is written
//            through or over what was planted.
//   limits   a dump writes a file of this user, mode 0600, ending in "# end";
//            past the file size limit (a full disk, as far as write(2) can
//            tell) the next dump must fail, not report success.
//   release  rank 1 calls MPI_Finalize after 3 allreduces; rank 0 calls a
//            4th, which must fail within CHORUS_TIMEOUT with an error saying
//            that rank 1 released the communicator.
//   agreed   the launcher's job ids are removed from the environment before
//            the first Chorus call: the ranks must agree on one (12 hex
//            digits, job_from=agreed), the same in every file and name
//            (CHORUS_TRACE_FILE holds %j).
#include <mpi.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "chorus.h"
#include "rank_test.h"

namespace {

std::string errorText(int rc) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return std::string(msg, size_t(len));
}

// Three allreduces checked against the rank count: the context is set up
// and the recorder holds something.
std::string warmUp(MPI_Comm c, int size) {
  for (int i = 0; i < 3; ++i) {
    int one = 1, sum = 0;
    const int rc = MPIX_Allreduce_gpu(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    if (rc != MPI_SUCCESS) return "allreduce #" + std::to_string(i + 1) + ": " + errorText(rc);
    if (sum != size) return "allreduce #" + std::to_string(i + 1) + " gave " + std::to_string(sum);
  }
  return "";
}

std::string refuse(MPI_Comm c, int rank) {
  const std::string key = "TEST_EXPECT_" + std::to_string(rank);
  const char *expect = std::getenv(key.c_str());
  if (!expect) return key + " is not set";
  const int rc = MPIX_Comm_gpu_trace_dump(c);
  if (rc == MPI_SUCCESS) return "the dump reported success";
  const std::string text = errorText(rc);
  if (text.find(expect) == std::string::npos) return "the error does not say '" + std::string(expect) + "': " + text;
  printf("rank %d: refused as expected: %s\n", rank, text.c_str());
  return "";
}

std::string limits(MPI_Comm c, int rank) {
  std::string path = std::getenv("CHORUS_TRACE_FILE");
  path.replace(path.find("%r"), 2, std::to_string(rank));
  int rc = MPIX_Comm_gpu_trace_dump(c);
  if (rc != MPI_SUCCESS) return "the first dump failed: " + errorText(rc);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return path + " was not written";
  if ((st.st_mode & 07777) != 0600 || st.st_uid != geteuid())
    return path + " has mode " + std::to_string(st.st_mode & 07777) + " (octal 600 wanted), uid " +
           std::to_string(st.st_uid);
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  if (last != "# end") return path + " does not end in '# end': " + last;
  // A file size limit below the dump's size: write(2) fails as on a full disk.
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit old, small;
  getrlimit(RLIMIT_FSIZE, &old);
  small = old;
  small.rlim_cur = 64;
  if (setrlimit(RLIMIT_FSIZE, &small) != 0) return "setrlimit failed";
  rc = MPIX_Comm_gpu_trace_dump(c);
  setrlimit(RLIMIT_FSIZE, &old);
  if (rc == MPI_SUCCESS) return "a dump cut short by the file size limit reported success";
  const std::string text = errorText(rc);
  if (text.find("File too large") == std::string::npos) return "the error does not say 'File too large': " + text;
  printf("rank %d: a cut-short dump fails: %s\n", rank, text.c_str());
  return "";
}

std::string release(MPI_Comm c, int rank) {
  if (rank == 1) return "";  // MPI_Finalize releases the communicator
  const double t0 = MPI_Wtime();
  int one = 1, sum = 0;
  const int rc = MPIX_Allreduce_gpu(&one, &sum, 1, MPI_INT, MPI_SUM, c);
  const double waited = MPI_Wtime() - t0;
  if (rc == MPI_SUCCESS) return "allreduce #4 succeeded without rank 1";
  const std::string text = errorText(rc);
  printf("rank %d: allreduce #4 after %.1f s: %s\n", rank, waited, text.c_str());
  if (text.find("rank 1 released the communicator") == std::string::npos)
    return "the error does not say that rank 1 released the communicator";
  return "";
}

// The field `key` of the header line of `path`.
std::string headerField(const std::string &path, const std::string &key) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  const size_t from = at + key.size() + 2;
  return line.substr(from, line.find(' ', from) - from);
}

std::string agreed(MPI_Comm c, int rank, int size) {
  const int rc = MPIX_Comm_gpu_trace_dump(c);
  if (rc != MPI_SUCCESS) return "the dump failed: " + errorText(rc);
  std::string pattern = std::getenv("CHORUS_TRACE_FILE");
  const size_t slash = pattern.rfind('/');
  const std::string dir = pattern.substr(0, slash), suffix = "-" + std::to_string(rank) + ".txt";
  std::string path;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        path = dir + "/" + name;
    }
    closedir(d);
  }
  if (path.empty()) return "no file ending in " + suffix + " in " + dir;
  const std::string job = headerField(path, "job"), from = headerField(path, "job_from");
  if (from != "agreed") return path + " says job_from=" + from + ", not agreed";
  if (job.size() != 12 || job.find_first_not_of("0123456789abcdef") != std::string::npos)
    return path + ": job=" + job + " is not 12 hex digits";
  if (path.find("-" + job + "-") == std::string::npos) return "the name " + path + " lacks the job " + job;
  char mine[16] = "", all[64][16];
  if (size > 64) return "at most 64 ranks";
  snprintf(mine, sizeof mine, "%s", job.c_str());
  MPI_Allgather(mine, sizeof mine, MPI_CHAR, all, sizeof mine, MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r)
    if (job != all[r]) return "rank " + std::to_string(r) + " has job " + all[r] + ", this rank " + job;
  printf("rank %d: agreed job %s in %s\n", rank, job.c_str(), path.c_str());
  return "";
}

}  // namespace

int main(int argc, char **argv) {
  int rank = 0, size = 1;
  initRanks(&argc, &argv, &rank, &size);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "agreed")  // as under a launcher that exports no job id (MPICH's hydra)
    for (const char *name : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID", "SLURM_STEP_ID"})
      unsetenv(name);
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  std::string failure = warmUp(c, size);
  if (!failure.empty()) {
  } else if (!std::getenv("CHORUS_TRACE_FILE") || !strstr(std::getenv("CHORUS_TRACE_FILE"), "%r")) {
    failure = "CHORUS_TRACE_FILE with %r is not set";
  } else if (mode == "refuse") {
    failure = refuse(c, rank);
  } else if (mode == "limits") {
    failure = limits(c, rank);
  } else if (mode == "release" && size == 2) {
    failure = release(c, rank);
  } else if (mode == "agreed") {
    failure = agreed(c, rank, size);
  } else {
    failure = "usage: test_trace_files refuse|limits|release|agreed (release on 2 ranks)";
  }
  if (failure.empty()) printf("PASS rank %d: %s\n", rank, mode.c_str());
  else printf("FAIL rank %d: %s: %s\n", rank, mode.c_str(), failure.c_str());
  fflush(stdout);
  if (mode != "release") MPI_Comm_free(&c);
  MPI_Finalize();
  return failure.empty() ? 0 : 1;
}

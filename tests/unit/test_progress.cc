// The nonblocking collectives' queue (core/progress.h) without MPI: work
// runs in submission order on one worker thread (never the submitter's),
// drain() returns only after everything submitted has run, idle() says so,
// and the destructor runs what is left before joining.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/progress.h"

using namespace chorus;

namespace {

struct Log {
  std::vector<int> order;  // written by the worker only
  std::atomic<int> onWorker{0};
  std::thread::id worker;
};

struct Item {
  Log *log;
  int index;
  int sleepMs;
};

void record(void *arg) {
  auto *item = static_cast<Item *>(arg);
  if (item->sleepMs) std::this_thread::sleep_for(std::chrono::milliseconds(item->sleepMs));
  item->log->order.push_back(item->index);
  if (ProgressQueue::onWorker()) item->log->onWorker.fetch_add(1);
  item->log->worker = std::this_thread::get_id();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(progress)

BOOST_AUTO_TEST_CASE(runs_in_order_on_a_worker_and_drains) {
  Log log;
  std::vector<Item> items;
  for (int i = 0; i < 50; ++i) items.push_back({&log, i, i % 10 == 0 ? 2 : 0});
  ProgressQueue queue;
  BOOST_TEST(queue.idle());
  for (Item &item : items) BOOST_TEST((queue.submit(record, &item) == Status::Ok));
  BOOST_TEST(!ProgressQueue::onWorker());
  queue.drain();
  BOOST_TEST(queue.idle());
  BOOST_REQUIRE(log.order.size() == items.size());
  for (size_t i = 0; i < items.size(); ++i) BOOST_TEST(log.order[i] == int(i));
  BOOST_TEST(log.onWorker.load() == int(items.size()));
  BOOST_TEST((log.worker != std::this_thread::get_id()));
}

BOOST_AUTO_TEST_CASE(not_idle_while_work_runs) {
  Log log;
  Item slow{&log, 7, 50};
  ProgressQueue queue;
  BOOST_TEST((queue.submit(record, &slow) == Status::Ok));
  BOOST_TEST(!queue.idle());  // 50 ms of work cannot be done yet
  queue.drain();
  BOOST_TEST(queue.idle());
  BOOST_TEST(log.order.size() == 1u);
}

BOOST_AUTO_TEST_CASE(destructor_runs_what_is_left) {
  Log log;
  std::vector<Item> items;
  for (int i = 0; i < 5; ++i) items.push_back({&log, i, 5});
  {
    ProgressQueue queue;
    for (Item &item : items) BOOST_TEST((queue.submit(record, &item) == Status::Ok));
  }
  BOOST_TEST(log.order.size() == items.size());
}

BOOST_AUTO_TEST_CASE(an_unused_queue_starts_no_thread) {
  ProgressQueue queue;  // its destructor must not hang on a thread never started
  BOOST_TEST(queue.idle());
  queue.drain();
}

BOOST_AUTO_TEST_SUITE_END()

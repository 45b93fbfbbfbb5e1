// bench_peer: the rclcpp side of fsmnodes' benchmark against ROS 2
// (test/bench/rclcpp). One process plays one role; the Go driver starts
// the processes, pairs them with each other or with the Go roles, and
// parses the lines they print.
//
//   bench_peer [--events] ROLE ...     --events: rclcpp's EventsExecutor
//                                      (Jazzy and later) instead of the
//                                      SingleThreadedExecutor
//   bench_peer sub SECONDS             count std_msgs/UInt8MultiArray on
//                                      /bench_data; print "rate N" each second
//   bench_peer pub BYTES SECONDS       publish BYTES-byte arrays on
//                                      /bench_data as fast as possible
//   bench_peer pong SECONDS            republish /bench_ping on /bench_pong
//   bench_peer ping BYTES SECONDS      one message in flight: publish on
//                                      /bench_ping, wait for /bench_pong
//                                      (the first 8 bytes carry a sequence
//                                      number; a ping unanswered for a
//                                      second is sent anew and counted);
//                                      print "rtt n N median NS p90 NS p99 NS lost L"
//   bench_peer fpong|lpong SECONDS     pong of fsmnodes_bench/msg/Blob (fixed
//                                      size, 1 MiB) on /bench_fping and
//                                      /bench_fpong; lpong answers with a
//                                      loaned message (shared memory)
//   bench_peer fping|lping SECONDS     ping of the same, the sequence number
//                                      in seq; lping publishes loaned messages
//   bench_peer server SECONDS          std_srvs/SetBool /bench_srv
//   bench_peer client SECONDS          call /bench_srv back to back; print
//                                      "calls N seconds S lost L" (a call
//                                      unanswered for a second is dropped,
//                                      counted and made anew)
//
// Every role uses the default QoS (reliable, volatile, keep last 10) and a
// SingleThreadedExecutor, as an ordinary rclcpp node does, or with
// --events the EventsExecutor.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "rclcpp/rclcpp.hpp"
#if __has_include("rclcpp/experimental/executors/events_executor/events_executor.hpp")
#include "rclcpp/experimental/executors/events_executor/events_executor.hpp"
#define HAVE_EVENTS_EXECUTOR 1
#endif
#include "std_msgs/msg/u_int8_multi_array.hpp"
#include "std_srvs/srv/set_bool.hpp"
#include "fsmnodes_bench/msg/blob.hpp"

using Blob = std_msgs::msg::UInt8MultiArray;
using Fixed = fsmnodes_bench::msg::Blob;
using SetBool = std_srvs::srv::SetBool;
using Clock = std::chrono::steady_clock;

namespace {

void usage() {
  std::fprintf(stderr, "usage: bench_peer [--events] sub|pub|pong|ping|fpong|fping|lpong|lping|server|client [BYTES] SECONDS\n");
  std::exit(2);
}

std::chrono::nanoseconds seconds(const std::string & s) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(std::stod(s)));
}

// waitFor spins until cond holds or the deadline passes.
template<typename F>
bool waitFor(rclcpp::Executor & exec, Clock::time_point deadline, F cond) {
  while (!cond()) {
    if (Clock::now() > deadline || !rclcpp::ok()) {
      return false;
    }
    exec.spin_some(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

int64_t pct(std::vector<int64_t> & v, int p) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) * p / 100];
}

// pingLoop sends pings with send(seq) until the deadline, one in flight,
// and prints the rtt line; got is set by the pong subscription when the
// answer to seq arrives.
template<typename Send>
void pingLoop(rclcpp::Executor & exec, Clock::time_point deadline, uint64_t & seq, bool & got, Send send) {
  std::vector<int64_t> rtts;
  uint64_t lost = 0;
  while (Clock::now() < deadline && rclcpp::ok()) {
    got = false;
    seq++;
    const auto t0 = Clock::now();
    const auto resend = t0 + std::chrono::seconds(1);
    send(seq);
    while (!got && Clock::now() < deadline && Clock::now() < resend && rclcpp::ok()) {
      exec.spin_once(std::chrono::milliseconds(100));
    }
    if (got) {
      rtts.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
    } else if (Clock::now() >= resend) {
      lost++;
    }
  }
  const size_t n = rtts.size();
  const int64_t med = pct(rtts, 50), p90 = pct(rtts, 90), p99 = pct(rtts, 99);
  std::printf("rtt n %zu median %lld p90 %lld p99 %lld lost %llu\n", n, static_cast<long long>(med),
    static_cast<long long>(p90), static_cast<long long>(p99), static_cast<unsigned long long>(lost));
}

}  // namespace

int main(int argc, char ** argv) {
  rclcpp::init(argc, argv);
  auto args = rclcpp::remove_ros_arguments(argc, argv);
  bool events = false;
  if (args.size() > 1 && args[1] == "--events") {
    events = true;
    args.erase(args.begin() + 1);
  }
  if (args.size() < 3) {
    usage();
  }
  const std::string role = args[1];
  size_t bytes = 0;
  std::string secs = args[2];
  if (role == "pub" || role == "ping") {
    if (args.size() < 4) {
      usage();
    }
    bytes = std::stoul(args[2]);
    secs = args[3];
  }
  const auto deadline = Clock::now() + seconds(secs);
  auto node = std::make_shared<rclcpp::Node>("bench_peer_" + role);
  std::unique_ptr<rclcpp::Executor> execp;
  if (events) {
#ifdef HAVE_EVENTS_EXECUTOR
    execp = std::make_unique<rclcpp::experimental::executors::EventsExecutor>();
#else
    std::fprintf(stderr, "bench_peer: this rclcpp has no EventsExecutor\n");
    return 2;
#endif
  } else {
    execp = std::make_unique<rclcpp::executors::SingleThreadedExecutor>();
  }
  rclcpp::Executor & exec = *execp;
  exec.add_node(node);
  const rclcpp::QoS qos(10);

  if (role == "sub") {
    uint64_t count = 0;
    auto sub = node->create_subscription<Blob>("bench_data", qos, [&count](Blob::ConstSharedPtr) { count++; });
    uint64_t last = 0;
    auto timer = node->create_wall_timer(std::chrono::seconds(1), [&]() {
      std::printf("rate %llu\n", static_cast<unsigned long long>(count - last));
      std::fflush(stdout);
      last = count;
    });
    exec.spin_until_future_complete(std::promise<void>().get_future(), deadline - Clock::now());
  } else if (role == "pub") {
    auto pub = node->create_publisher<Blob>("bench_data", qos);
    if (!waitFor(exec, deadline, [&]() { return pub->get_subscription_count() > 0; })) {
      std::fprintf(stderr, "pub: no subscriber\n");
      return 1;
    }
    Blob msg;
    msg.data.resize(bytes);
    uint64_t sent = 0;
    while (Clock::now() < deadline && rclcpp::ok()) {
      std::memcpy(msg.data.data(), &sent, std::min(bytes, sizeof(sent)));
      pub->publish(msg);
      sent++;
    }
    std::printf("sent %llu\n", static_cast<unsigned long long>(sent));
  } else if (role == "pong") {
    auto pub = node->create_publisher<Blob>("bench_pong", qos);
    auto sub = node->create_subscription<Blob>("bench_ping", qos, [&pub](Blob::ConstSharedPtr m) { pub->publish(*m); });
    exec.spin_until_future_complete(std::promise<void>().get_future(), deadline - Clock::now());
  } else if (role == "ping") {
    auto pub = node->create_publisher<Blob>("bench_ping", qos);
    uint64_t seq = 0;
    bool got = false;
    auto sub = node->create_subscription<Blob>("bench_pong", qos, [&got, &seq](Blob::ConstSharedPtr m) {
      uint64_t s = 0;
      if (m->data.size() >= sizeof(s)) {
        std::memcpy(&s, m->data.data(), sizeof(s));
      }
      if (s == seq) {
        got = true;
      }
    });
    if (!waitFor(exec, deadline, [&]() { return pub->get_subscription_count() > 0 && sub->get_publisher_count() > 0; })) {
      std::fprintf(stderr, "ping: no pong\n");
      return 1;
    }
    Blob msg;
    msg.data.resize(std::max(bytes, sizeof(seq)));
    pingLoop(exec, deadline, seq, got, [&](uint64_t s) {
      std::memcpy(msg.data.data(), &s, sizeof(s));
      pub->publish(msg);
    });
  } else if (role == "fpong" || role == "lpong") {
    const bool loan = role[0] == 'l';
    auto pub = node->create_publisher<Fixed>("bench_fpong", qos);
    if (loan && !pub->can_loan_messages()) {
      std::fprintf(stderr, "%s: the publisher cannot loan messages (shared memory off?)\n", role.c_str());
      return 1;
    }
    auto sub = node->create_subscription<Fixed>("bench_fping", qos, [&pub, loan](Fixed::ConstSharedPtr m) {
      if (loan) {
        auto l = pub->borrow_loaned_message();
        l.get() = *m;
        pub->publish(std::move(l));
      } else {
        pub->publish(*m);
      }
    });
    exec.spin_until_future_complete(std::promise<void>().get_future(), deadline - Clock::now());
  } else if (role == "fping" || role == "lping") {
    const bool loan = role[0] == 'l';
    auto pub = node->create_publisher<Fixed>("bench_fping", qos);
    if (loan && !pub->can_loan_messages()) {
      std::fprintf(stderr, "%s: the publisher cannot loan messages (shared memory off?)\n", role.c_str());
      return 1;
    }
    uint64_t seq = 0;
    bool got = false;
    auto sub = node->create_subscription<Fixed>("bench_fpong", qos, [&got, &seq](Fixed::ConstSharedPtr m) {
      if (m->seq == seq) {
        got = true;
      }
    });
    if (!waitFor(exec, deadline, [&]() { return pub->get_subscription_count() > 0 && sub->get_publisher_count() > 0; })) {
      std::fprintf(stderr, "%s: no pong\n", role.c_str());
      return 1;
    }
    auto msg = std::make_unique<Fixed>();
    pingLoop(exec, deadline, seq, got, [&](uint64_t s) {
      if (loan) {
        auto l = pub->borrow_loaned_message();
        l.get().seq = s;
        pub->publish(std::move(l));
      } else {
        msg->seq = s;
        pub->publish(*msg);
      }
    });
  } else if (role == "server") {
    auto srv = node->create_service<SetBool>("bench_srv",
      [](const std::shared_ptr<SetBool::Request> req, std::shared_ptr<SetBool::Response> resp) {
        resp->success = req->data;
      });
    exec.spin_until_future_complete(std::promise<void>().get_future(), deadline - Clock::now());
  } else if (role == "client") {
    auto cli = node->create_client<SetBool>("bench_srv");
    if (!cli->wait_for_service(deadline - Clock::now())) {
      std::fprintf(stderr, "client: no server\n");
      return 1;
    }
    uint64_t calls = 0, lost = 0;
    const auto t0 = Clock::now();
    while (Clock::now() < deadline && rclcpp::ok()) {
      auto req = std::make_shared<SetBool::Request>();
      req->data = true;
      auto fut = cli->async_send_request(req);
      if (exec.spin_until_future_complete(fut, std::chrono::seconds(1)) != rclcpp::FutureReturnCode::SUCCESS) {
        cli->remove_pending_request(fut);
        lost++;
        continue;
      }
      calls++;
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("calls %llu seconds %f lost %llu\n", static_cast<unsigned long long>(calls), s,
      static_cast<unsigned long long>(lost));
  } else {
    usage();
  }
  rclcpp::shutdown();
  return 0;
}

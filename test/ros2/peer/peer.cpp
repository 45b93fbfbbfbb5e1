// ros2_peer: the rclcpp programs the test/ros2 tests run against our nodes.
// One executable, one role per mode; ROS arguments (--ros-args ...) follow
// the mode's own arguments. Every line it prints is flushed at once, so the
// tests can wait for it.
//
//   ros2_peer talker TOPIC                 node "talker": std_msgs/String "hello <n>" every 100 ms
//                                          (reliable, volatile, keep last 10)
//   ros2_peer listener TOPIC [best_effort] [transient_local]
//                                          node "listener": prints "heard: <data>" per message and
//                                          "incompatible qos: <policy>" when no publisher can match
//   ros2_peer latched TOPIC TEXT           node "latched": publishes TEXT once (reliable, transient
//                                          local, keep last 1), then spins
//   ros2_peer add_server SERVICE           node "adder": example_interfaces/srv/AddTwoInts, sum = a + b
//   ros2_peer caller TOPIC SERVICE RESULT  node "caller": for every String on TOPIC, calls the
//                                          std_srvs/srv/SetBool SERVICE (data = text == "true") from
//                                          inside the subscription callback, waits for the answer
//                                          there, and publishes "success=<0|1> message=<m>" on RESULT
//   ros2_peer params                       node "params": parameters count (int, 0..10, default 3),
//                                          gain (0.5), mode ("auto"), enabled (true), names ([a, b])
//   ros2_peer fibonacci ACTION             node "fibonacci": example_interfaces/action/Fibonacci
//                                          server, one feedback per step every 100 ms; prints
//                                          "goal <order>", then "canceled" or "succeeded"
//   ros2_peer twist_stamped_pub TOPIC X [FRAME]
//                                          node "twist_stamped_pub": geometry_msgs/TwistStamped with
//                                          linear.x = X every 100 ms, stamped with the node clock's
//                                          now in FRAME (default base_link), as Nav2's controller
//                                          server and teleop_twist_joy send them (keep last 10)
//   ros2_peer twist_stamped_sub TOPIC      node "twist_stamped_sub": subscribes TwistStamped with
//                                          the system default QoS, as Jazzy's diff_drive_controller
//                                          does; prints "heard: stamp=<sec>.<nanosec, 9 digits>
//                                          frame=<frame_id> x=<linear.x> z=<angular.z>" per message
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "example_interfaces/action/fibonacci.hpp"
#include "example_interfaces/srv/add_two_ints.hpp"
#include "geometry_msgs/msg/twist_stamped.hpp"
#include "rclcpp/rclcpp.hpp"
#include "rclcpp_action/rclcpp_action.hpp"
#include "std_msgs/msg/string.hpp"
#include "std_srvs/srv/set_bool.hpp"

using namespace std::chrono_literals;

namespace {

void say(const std::string &line) { std::cout << line << std::endl; }

int usage() {
  std::cerr << "usage: ros2_peer talker|listener|latched|add_server|caller|params|fibonacci|twist_stamped_pub|"
               "twist_stamped_sub ARGS... "
               "[--ros-args ...]"
            << std::endl;
  return 2;
}

// own_args returns the arguments before --ros-args (after the mode).
std::vector<std::string> own_args(int argc, char **argv) {
  std::vector<std::string> out;
  for (int i = 2; i < argc; i++) {
    if (std::string(argv[i]) == "--ros-args") break;
    out.push_back(argv[i]);
  }
  return out;
}

bool has(const std::vector<std::string> &v, const std::string &s) {
  for (const auto &x : v)
    if (x == s) return true;
  return false;
}

int talker(const std::vector<std::string> &a) {
  if (a.size() < 1) return usage();
  auto node = rclcpp::Node::make_shared("talker");
  auto pub = node->create_publisher<std_msgs::msg::String>(a[0], 10);
  int n = 0;
  auto timer = node->create_wall_timer(100ms, [&]() {
    std_msgs::msg::String m;
    m.data = "hello " + std::to_string(++n);
    pub->publish(m);
  });
  say("ready");
  rclcpp::spin(node);
  return 0;
}

int listener(const std::vector<std::string> &a) {
  if (a.size() < 1) return usage();
  auto node = rclcpp::Node::make_shared("listener");
  rclcpp::QoS qos(10);
  if (has(a, "best_effort")) qos.best_effort();
  if (has(a, "transient_local")) qos.transient_local();
  rclcpp::SubscriptionOptions opts;
  opts.event_callbacks.incompatible_qos_callback = [](rclcpp::QOSRequestedIncompatibleQoSInfo &info) {
    say("incompatible qos: policy " + std::to_string(info.last_policy_kind));
  };
  auto sub = node->create_subscription<std_msgs::msg::String>(
      a[0], qos, [](const std_msgs::msg::String &m) { say("heard: " + m.data); }, opts);
  say("ready");
  rclcpp::spin(node);
  return 0;
}

int latched(const std::vector<std::string> &a) {
  if (a.size() < 2) return usage();
  auto node = rclcpp::Node::make_shared("latched");
  auto pub = node->create_publisher<std_msgs::msg::String>(a[0], rclcpp::QoS(1).transient_local());
  std_msgs::msg::String m;
  m.data = a[1];
  pub->publish(m);
  say("published");
  rclcpp::spin(node);
  return 0;
}

int add_server(const std::vector<std::string> &a) {
  if (a.size() < 1) return usage();
  auto node = rclcpp::Node::make_shared("adder");
  using AddTwoInts = example_interfaces::srv::AddTwoInts;
  auto srv = node->create_service<AddTwoInts>(
      a[0], [](const std::shared_ptr<AddTwoInts::Request> req, std::shared_ptr<AddTwoInts::Response> res) {
        res->sum = req->a + req->b;
        say("add " + std::to_string(req->a) + " " + std::to_string(req->b));
      });
  say("ready");
  rclcpp::spin(node);
  return 0;
}

int caller(const std::vector<std::string> &a) {
  if (a.size() < 3) return usage();
  auto node = rclcpp::Node::make_shared("caller");
  using SetBool = std_srvs::srv::SetBool;
  // The client's answers are handled in their own callback group, on another
  // thread of the executor, while the subscription callback waits for them.
  auto client_group = node->create_callback_group(rclcpp::CallbackGroupType::MutuallyExclusive);
  auto client = node->create_client<SetBool>(a[1], rmw_qos_profile_services_default, client_group);
  auto pub = node->create_publisher<std_msgs::msg::String>(a[2], 10);
  auto sub = node->create_subscription<std_msgs::msg::String>(a[0], 10, [&](const std_msgs::msg::String &m) {
    auto req = std::make_shared<SetBool::Request>();
    req->data = m.data == "true";
    if (!client->wait_for_service(10s)) {
      say("no service");
      return;
    }
    auto fut = client->async_send_request(req);
    if (fut.future.wait_for(20s) != std::future_status::ready) {
      say("call timed out");
      return;
    }
    auto res = fut.future.get();
    std_msgs::msg::String out;
    out.data = "success=" + std::to_string(res->success) + " message=" + res->message;
    say(out.data);
    pub->publish(out);
  });
  say("ready");
  rclcpp::executors::MultiThreadedExecutor exec(rclcpp::ExecutorOptions(), 2);
  exec.add_node(node);
  exec.spin();
  return 0;
}

int params() {
  auto node = rclcpp::Node::make_shared("params");
  rcl_interfaces::msg::ParameterDescriptor d;
  d.description = "how many";
  rcl_interfaces::msg::IntegerRange r;
  r.from_value = 0;
  r.to_value = 10;
  r.step = 1;
  d.integer_range.push_back(r);
  node->declare_parameter("count", 3, d);
  node->declare_parameter("gain", 0.5);
  node->declare_parameter("mode", std::string("auto"));
  node->declare_parameter("enabled", true);
  node->declare_parameter("names", std::vector<std::string>{"a", "b"});
  auto cb = node->add_on_set_parameters_callback([](const std::vector<rclcpp::Parameter> &ps) {
    for (const auto &p : ps) say("set " + p.get_name() + " = " + p.value_to_string());
    rcl_interfaces::msg::SetParametersResult res;
    res.successful = true;
    return res;
  });
  say("ready");
  rclcpp::spin(node);
  return 0;
}

int fibonacci(const std::vector<std::string> &a) {
  if (a.size() < 1) return usage();
  using Fibonacci = example_interfaces::action::Fibonacci;
  using Handle = rclcpp_action::ServerGoalHandle<Fibonacci>;
  auto node = rclcpp::Node::make_shared("fibonacci");
  auto execute = [](std::shared_ptr<Handle> h) {
    auto fb = std::make_shared<Fibonacci::Feedback>();
    fb->sequence = {0, 1};
    auto res = std::make_shared<Fibonacci::Result>();
    for (int i = 1; i < h->get_goal()->order; i++) {
      if (h->is_canceling()) {
        res->sequence = fb->sequence;
        h->canceled(res);
        say("canceled");
        return;
      }
      fb->sequence.push_back(fb->sequence[i] + fb->sequence[i - 1]);
      h->publish_feedback(fb);
      std::this_thread::sleep_for(100ms);
    }
    res->sequence = fb->sequence;
    h->succeed(res);
    say("succeeded");
  };
  auto server = rclcpp_action::create_server<Fibonacci>(
      node, a[0],
      [](const rclcpp_action::GoalUUID &, std::shared_ptr<const Fibonacci::Goal> g) {
        say("goal " + std::to_string(g->order));
        return g->order < 0 ? rclcpp_action::GoalResponse::REJECT : rclcpp_action::GoalResponse::ACCEPT_AND_EXECUTE;
      },
      [](const std::shared_ptr<Handle>) { return rclcpp_action::CancelResponse::ACCEPT; },
      [execute](const std::shared_ptr<Handle> h) { std::thread(execute, h).detach(); });
  say("ready");
  rclcpp::spin(node);
  return 0;
}

int twist_stamped_pub(const std::vector<std::string> &a) {
  if (a.size() < 2) return usage();
  double x = std::stod(a[1]);
  std::string frame = a.size() > 2 ? a[2] : "base_link";
  auto node = rclcpp::Node::make_shared("twist_stamped_pub");
  auto pub = node->create_publisher<geometry_msgs::msg::TwistStamped>(a[0], 10);
  auto timer = node->create_wall_timer(100ms, [&]() {
    geometry_msgs::msg::TwistStamped m;
    m.header.stamp = node->get_clock()->now();
    m.header.frame_id = frame;
    m.twist.linear.x = x;
    pub->publish(m);
  });
  say("ready");
  rclcpp::spin(node);
  return 0;
}

int twist_stamped_sub(const std::vector<std::string> &a) {
  if (a.size() < 1) return usage();
  auto node = rclcpp::Node::make_shared("twist_stamped_sub");
  auto sub = node->create_subscription<geometry_msgs::msg::TwistStamped>(
      a[0], rclcpp::SystemDefaultsQoS(), [](const geometry_msgs::msg::TwistStamped &m) {
        char ns[16];
        std::snprintf(ns, sizeof ns, "%09u", static_cast<unsigned>(m.header.stamp.nanosec));
        std::ostringstream line;
        line << "heard: stamp=" << m.header.stamp.sec << "." << ns << " frame=" << m.header.frame_id
             << " x=" << m.twist.linear.x << " z=" << m.twist.angular.z;
        say(line.str());
      });
  say("ready");
  rclcpp::spin(node);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  rclcpp::init(argc, argv);
  std::string mode = argv[1];
  auto a = own_args(argc, argv);
  int rc;
  if (mode == "talker") rc = talker(a);
  else if (mode == "listener") rc = listener(a);
  else if (mode == "latched") rc = latched(a);
  else if (mode == "add_server") rc = add_server(a);
  else if (mode == "caller") rc = caller(a);
  else if (mode == "params") rc = params();
  else if (mode == "fibonacci") rc = fibonacci(a);
  else if (mode == "twist_stamped_pub") rc = twist_stamped_pub(a);
  else if (mode == "twist_stamped_sub") rc = twist_stamped_sub(a);
  else rc = usage();
  rclcpp::shutdown();
  return rc;
}

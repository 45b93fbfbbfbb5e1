// ros2msg definitions of the types the dashboard publishes, used when no
// advertised channel carries the type (e.g. nobody publishes
// teleoperation/cmd_vel yet, so the bridge has no schema to show us).

const SEP = '\n================================================================================\n';

const VECTOR3 = 'MSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z';
const POINT = 'MSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z';
const QUATERNION = 'MSG: geometry_msgs/Quaternion\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1';
const HEADER = 'MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id';
const TIME = 'MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec';
const POSE = 'MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation';

export const FALLBACK = {
  'geometry_msgs/msg/Twist': ['Vector3 linear\nVector3 angular', VECTOR3].join(SEP),
  'geometry_msgs/msg/PoseStamped': ['std_msgs/Header header\nPose pose', HEADER, TIME, POSE, POINT, QUATERNION].join(SEP),
  'geometry_msgs/msg/TwistStamped': ['std_msgs/Header header\nTwist twist', HEADER, TIME,
    'MSG: geometry_msgs/Twist\nVector3 linear\nVector3 angular', VECTOR3].join(SEP),
};

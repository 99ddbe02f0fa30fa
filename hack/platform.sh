# Sourced by the hack/ scripts: the platforms dev mode and the tests support, checked before any
# work starts. Sets BLOOM_OS_ARCH to kube-api-test's name for this platform (linux-amd64 or
# linux-arm64), the directory suffix its binaries are looked up under.
#
# Why only these: the Kubernetes test binaries are built for linux/<arch> (kube-apiserver and etcd
# run only on Linux), and the test servers are found where Debian/Ubuntu packages install them
# (hack/test-prereqs.sh installs them with apt-get).
BLOOM_PLATFORMS="Linux on x86_64 or arm64 (aarch64), with Debian or Ubuntu packages"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64 | Linux-amd64) BLOOM_OS_ARCH=linux-amd64 ;;
  Linux-aarch64 | Linux-arm64) BLOOM_OS_ARCH=linux-arm64 ;;
  *)
    echo "bloom-operator: dev mode and the tests support $BLOOM_PLATFORMS; this machine is $(uname -s) $(uname -m)." >&2
    echo "bloom-operator: building the jar needs only Java 17 and Maven: mvn -B package -DskipTests" >&2
    exit 1
    ;;
esac
export BLOOM_OS_ARCH

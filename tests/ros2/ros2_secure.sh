# ardnet in a DDS Security domain (docs/ros2.md#security): a keystore made here with openssl,
# in SROS2's layout (two enclaves: /ardnet and /peer, each with its own identity and permissions,
# one identity CA and one permissions CA); ardnet --out ros2:TOPIC with ROS_SECURITY_ENABLE=true
# reaches a secured peer with every value exact while an unsecured peer on the same domain gets
# nothing; under Enforce a missing file or a file the plugins refuse stops ardnet at start
# (exit 100, the file or the cause named); under Permissive a missing enclave runs unsecured,
# with a warning, and its participant's user data names the enclave.
source "$(dirname "$0")/common.sh"
: "${GRAPH:?}"
command -v openssl >/dev/null || {
    [ "${CI:-}" = true ] && { echo "FAIL: openssl is not installed (scripts/deps.sh installs it)"; exit 1; }
    echo "skipped: needs openssl"
    exit 77
}

KS=$T/keystore
mkdir -p "$KS/private" "$KS/public"
ossl() { openssl "$@" 2>>"$T/openssl.err" >/dev/null || fail "openssl $1 failed"; }

# A self-signed CA: key in private/, certificate in public/.
make_ca() { # NAME
    ossl ecparam -name prime256v1 -genkey -noout -out "$KS/private/$1.key.pem"
    ossl req -x509 -new -key "$KS/private/$1.key.pem" -sha256 -days 3650 \
        -subj "/CN=ardnet test $1" -out "$KS/public/$1.cert.pem"
}

sign() { # IN.xml OUT.p7s CA
    ossl smime -sign -text -in "$1" -out "$2" -signer "$KS/public/$3.cert.pem" \
        -inkey "$KS/private/$3.key.pem"
}

governance() { # OUT.xml
    cat >"$1" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains><id>$ROS_DOMAIN_ID</id></domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>SIGN</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
EOF
}

permissions() { # OUT.xml SUBJECT
    cat >"$1" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="$2">
      <subject_name>CN=$2</subject_name>
      <validity><not_before>2020-01-01T00:00:00</not_before><not_after>2099-12-31T23:59:59</not_after></validity>
      <allow_rule>
        <domains><id>$ROS_DOMAIN_ID</id></domains>
        <publish><topics><topic>*</topic></topics></publish>
        <subscribe><topics><topic>*</topic></topics></subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
EOF
}

# An enclave: its key, its certificate from the identity CA (subject CN=NAME), the CAs'
# certificates, governance and permissions signed by GOVCA (the permissions CA unless told).
make_enclave() { # PATH NAME [GOVCA]
    local d=$KS/enclaves$1
    mkdir -p "$d"
    ossl ecparam -name prime256v1 -genkey -noout -out "$d/key.pem"
    ossl req -new -key "$d/key.pem" -subj "/CN=$2" -out "$T/$2.csr"
    ossl x509 -req -in "$T/$2.csr" -CA "$KS/public/identity_ca.cert.pem" \
        -CAkey "$KS/private/identity_ca.key.pem" -CAcreateserial -sha256 -days 3650 -out "$d/cert.pem"
    cp "$KS/public/identity_ca.cert.pem" "$KS/public/permissions_ca.cert.pem" "$d/"
    governance "$T/governance.xml"
    permissions "$T/$2.permissions.xml" "$2"
    sign "$T/governance.xml" "$d/governance.p7s" "${3:-permissions_ca}"
    sign "$T/$2.permissions.xml" "$d/permissions.p7s" permissions_ca
}

make_ca identity_ca
make_ca permissions_ca
make_enclave /ardnet ardnet_test
make_enclave /peer peer_test
# Signed by the identity CA, not the permissions CA: the access control plugin refuses it.
make_enclave /badsig badsig_test identity_ca
# Everything but governance.p7s.
make_enclave /broken broken_test
rm "$KS/enclaves/broken/governance.p7s"

secure_env=(ROS_SECURITY_ENABLE=true ROS_SECURITY_KEYSTORE="$KS")
"$LOCAL" pub arm arm.state --count 1 >/dev/null

# 0. Values ROS 2 would read as "off" or "Permissive", a malformed enclave, Enforce without a
# keystore: refused at start, the variable named, exit 100.
refused() { # WHAT VAR=VALUE...
    local what=$1 rc=0
    shift
    env "$@" timeout 60 "$ARDNET" --in arm.state --out ros2:/arm/state >"$T/refused.out" \
        2>"$T/refused.err" || rc=$?
    [ "$rc" = 100 ] || fail "$*: exit $rc, expected 100"
    grep -qF "$what" "$T/refused.err" || fail "$*: $what not named: $(cat "$T/refused.err")"
}
refused "ROS_SECURITY_ENABLE '1'" ROS_SECURITY_ENABLE=1 ROS_SECURITY_KEYSTORE="$KS"
refused "ROS_SECURITY_STRATEGY 'enforce'" "${secure_env[@]}" ROS_SECURITY_STRATEGY=enforce
refused "ROS_SECURITY_ENCLAVE_OVERRIDE 'ardnet'" "${secure_env[@]}" ROS_SECURITY_ENCLAVE_OVERRIDE=ardnet
refused "ROS_SECURITY_ENCLAVE_OVERRIDE '/a//b'" "${secure_env[@]}" ROS_SECURITY_ENCLAVE_OVERRIDE=/a//b
refused "ROS_SECURITY_KEYSTORE: not set" ROS_SECURITY_ENABLE=true ROS_SECURITY_STRATEGY=Enforce

# 1. Enforce, a file missing: no start, the file named, exit 100 (an ardnet that started anyway
# runs until the timeout: exit 124).
rc=0
env "${secure_env[@]}" ROS_SECURITY_STRATEGY=Enforce ROS_SECURITY_ENCLAVE_OVERRIDE=/broken \
    timeout 60 "$ARDNET" --in arm.state --out ros2:/arm/state >"$T/broken.out" 2>"$T/broken.err" || rc=$?
[ "$rc" = 100 ] || fail "Enforce with governance.p7s missing: exit $rc, expected 100"
grep -qF "enclaves/broken/governance.p7s" "$T/broken.err" ||
    fail "Enforce with governance.p7s missing: the file is not named"

# 2. Enforce, governance signed by the wrong CA: the participant is refused, the cause named.
rc=0
env "${secure_env[@]}" ROS_SECURITY_STRATEGY=Enforce ROS_SECURITY_ENCLAVE_OVERRIDE=/badsig \
    timeout 60 "$ARDNET" --in arm.state --out ros2:/arm/state >"$T/badsig.out" 2>"$T/badsig.err" || rc=$?
[ "$rc" = 100 ] || fail "Enforce with a governance of the wrong signer: exit $rc, expected 100"
grep -qF "security files of enclave /badsig" "$T/badsig.err" ||
    fail "Enforce with a governance of the wrong signer: the security cause is not named"

# 3. Secured: the secured peer gets every value exact, the unsecured one nothing.
RT="chrt -f 20"
bg subS $RT "$PEER" sub arm rt/arm/state --secure "$KS/enclaves/peer" --first-ms 30000 \
    --idle-ms 1500 --matched "$T/mS"
bg subU $RT "$PEER" sub arm rt/arm/state --first-ms 600000 --max-ms 600000 --expect-none \
    --matched "$T/mU"
bg ardnet env "${secure_env[@]}" ROS_SECURITY_STRATEGY=Enforce ROS_SECURITY_ENCLAVE_OVERRIDE=/ardnet \
    $RT "$ARDNET" --prio 20 --in arm.state --out ros2:/arm/state
wait_file "$T/mS" 30 || fail "the secured DDS reader never matched ardnet's writer"
sleep 0.3 # (the matched reader is seen by ardnet's writer, too)
"$LOCAL" pub arm arm.state --count 1000 --rate 1000 >/dev/null || fail "local writer failed"
finish subS || fail "secured DDS peer: values wrong or none"
n=$(field subS received)
[ "$(field subS bad)" = 0 ] && [ "$(field subS older)" = 0 ] || fail "subS: bad or reordered samples"
[ "$n" -ge 950 ] && [ "$n" -le 1001 ] || fail "subS: received $n of 1000 (need >= 950)"
stop ardnet || fail "ardnet exit status (secured)"
stop subU || fail "the unsecured DDS peer got samples from the secured ardnet"
[ "$(field subU received)" = 0 ] || fail "the unsecured DDS peer got samples"
[ ! -e "$T/mU" ] || fail "the unsecured DDS reader matched the secured ardnet's writer"
grep -qi "unsecured" "$T/ardnet.err" && fail "secured ardnet warned of running unsecured"

# 4. Permissive, the enclave missing: a warning, and ardnet runs unsecured (the unsecured peer
# gets its samples).
bg subU2 $RT "$PEER" sub arm rt/arm/state --first-ms 30000 --idle-ms 1500 --matched "$T/mU2"
bg ardnet2 env "${secure_env[@]}" ROS_SECURITY_STRATEGY=Permissive \
    ROS_SECURITY_ENCLAVE_OVERRIDE=/missing $RT "$ARDNET" --prio 20 --in arm.state --out ros2:/arm/state
wait_file "$T/mU2" 30 || fail "Permissive, enclave missing: the unsecured reader never matched"
sleep 0.3
"$LOCAL" pub arm arm.state --count 200 --rate 1000 >/dev/null || fail "local writer failed"
finish subU2 || fail "Permissive, enclave missing: the unsecured peer got nothing or wrong values"
# The participant's user data names the enclave ROS_SECURITY_ENCLAVE_OVERRIDE gave.
CYCLONEDDS_URI=${CYCLONEDDS_URI/<Discovery>/<Discovery><SPDPInterval>1s</SPDPInterval>} \
    "$GRAPH" 20 >"$T/graph.txt" 2>"$T/graph.err" || fail "no ros_discovery_info from ardnet"
grep -q "^participant [^ ]* name=ardnet user_data=enclave=/missing;$" "$T/graph.txt" ||
    fail "participant user data: $(grep '^participant' "$T/graph.txt"), expected enclave=/missing;"
stop ardnet2 || fail "ardnet exit status (Permissive)"
grep -q "warning: .*enclaves/missing.*running UNSECURED" "$T/ardnet2.err" ||
    fail "Permissive, enclave missing: no warning naming the enclave's directory"
echo "ok: secured peer $n/1000 exact, unsecured peer 0; Enforce refused a missing file and a" \
    "wrong signer (exit 100); Permissive without the enclave ran unsecured, warned"

# SPDX-License-Identifier: MIT
"""The harness itself: the Ceph gateway of ceph_gateway.py serves S3,
signed with SigV4 (curl --aws-sigv4). A test of the gateway, not of fring."""
import hashlib
import os
import re

import ceph_gateway


def keys_and_prefixes(xml):
    text = xml.decode()
    return (re.findall(r"<Key>([^<]*)</Key>", text),
            re.findall(r"<Prefix>([^<]*)</Prefix>", text))


def test_put_get_range_list(gateway):
    b = "/" + gateway.bucket
    data = os.urandom(3 << 20)
    st, _ = gateway.request("PUT", b + "/dir/big.bin", data=data)
    assert st == 200
    for k in ("dir/sub/a", "dir/sub/b", "dir/c", "top"):
        assert gateway.request("PUT", "%s/%s" % (b, k), data=k.encode())[0] == 200

    st, body = gateway.request("GET", b + "/dir/big.bin")
    assert st == 200
    assert hashlib.sha256(body).digest() == hashlib.sha256(data).digest()
    # A range crossing RGW's 4 MiB stripe would need a bigger object; this
    # one checks offsets inside and at the end.
    st, body = gateway.request("GET", b + "/dir/big.bin",
                               headers=["Range: bytes=1000000-1000099"])
    assert st == 206 and body == data[1000000:1000100]
    st, body = gateway.request("GET", b + "/dir/big.bin",
                               headers=["Range: bytes=-10"])
    assert st == 206 and body == data[-10:]

    st, body = gateway.request("GET", b + "?list-type=2&delimiter=/&prefix=dir/")
    assert st == 200, body
    keys, prefixes = keys_and_prefixes(body)
    assert keys == ["dir/big.bin", "dir/c"]
    # The first <Prefix> is the request's own.
    assert prefixes == ["dir/", "dir/sub/"]
    assert "<Size>%d</Size>" % len(data) in body.decode()


def test_wrong_secret_refused(gateway):
    st, body = ceph_gateway.Gateway.request(
        type("bad", (), {"region": gateway.region,
                         "access_key": gateway.access_key,
                         "secret_key": "x" * 40,
                         "endpoint": gateway.endpoint})(),
        "GET", "/" + gateway.bucket + "?list-type=2")
    assert st == 403 and b"SignatureDoesNotMatch" in body


def test_missing_key(gateway):
    st, body = gateway.request("GET", "/%s/no/such/key" % gateway.bucket)
    assert st == 404 and b"NoSuchKey" in body

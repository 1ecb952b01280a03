# SPDX-License-Identifier: MIT
"""The harness itself: the Ceph gateway of ceph_gateway.py serves S3,
signed with SigV4 (curl --aws-sigv4). A test of the gateway, not of fring."""
import copy
import hashlib
import os
import re
import urllib.parse


def keys_and_prefixes(xml):
    text = xml.decode()
    return (re.findall(r"<Key>([^<]*)</Key>", text),
            re.findall(r"<Prefix>([^<]*)</Prefix>", text))


def test_put_get_range_list(gateway):
    b = "/" + gateway.bucket
    data = os.urandom(5 << 20)
    st, _ = gateway.request("PUT", b + "/dir/big.bin", data=data)
    assert st == 200
    for k in ("dir/sub/a", "dir/sub/b", "dir/c", "top"):
        assert gateway.request("PUT", "%s/%s" % (b, k), data=k.encode())[0] == 200

    st, body = gateway.request("GET", b + "/dir/big.bin")
    assert st == 200
    assert hashlib.sha256(body).digest() == hashlib.sha256(data).digest()
    # Across RGW's 4 MiB stripe (two RADOS objects), then the last bytes.
    st, body = gateway.request("GET", b + "/dir/big.bin",
                               headers=["Range: bytes=4194000-4194399"])
    assert st == 206 and body == data[4194000:4194400]
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
    bad = copy.copy(gateway)        # same gateway, never stopped through it
    bad.secret_key = "x" * 40
    st, body = bad.request("GET", "/" + gateway.bucket + "?list-type=2")
    assert st == 403 and b"SignatureDoesNotMatch" in body


def test_missing_key(gateway):
    st, body = gateway.request("GET", "/%s/no/such/key" % gateway.bucket)
    assert st == 404 and b"NoSuchKey" in body


def test_list_pages(gateway):
    b = "/" + gateway.bucket
    names = ["pages/k%02d" % i for i in range(7)]
    for k in names:
        assert gateway.request("PUT", "%s/%s" % (b, k), data=b"x")[0] == 200
    seen, token, pages = [], None, 0
    while True:
        q = "?list-type=2&prefix=pages/&max-keys=3"
        if token:
            q += "&continuation-token=" + urllib.parse.quote(token, safe="")
        st, body = gateway.request("GET", b + q)
        assert st == 200, body
        pages += 1
        seen += keys_and_prefixes(body)[0]
        m = re.search(r"<NextContinuationToken>([^<]*)<", body.decode())
        if b"<IsTruncated>true</IsTruncated>" not in body:
            break
        token = m.group(1)
    assert seen == names and pages == 3

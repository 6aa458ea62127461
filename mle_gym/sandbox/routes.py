"""Routing through rtnetlink: the destinations the host takes as its own, and `prohibit`
routes added inside a sandbox's network namespace.

The routes must be added from inside that namespace, with CAP_NET_ADMIN over it. When the
host is not root, the namespace belongs to the sandbox's user namespace, which a process
can join only while it has one thread, and the capability it gains there does not survive
an exec. So this file is also a program, run as `python -I -S routes.py PID PREFIX...`: it
needs nothing but the standard library, joins the namespaces itself and talks to the kernel
directly (no `ip`, which would lose the capability).
"""

from __future__ import annotations

import ctypes
import fcntl
import ipaddress
import os
import socket
import struct
import sys

_RTM_NEWROUTE, _RTM_GETROUTE = 24, 26
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_NLM_F_REQUEST, _NLM_F_ACK, _NLM_F_DUMP = 0x1, 0x4, 0x300
_NLM_F_REPLACE, _NLM_F_CREATE = 0x100, 0x400
_RTA_DST, _RTA_TABLE = 1, 15
_RT_TABLE_MAIN, _RT_TABLE_LOCAL = 254, 255
_RTN_LOCAL, _RTN_BROADCAST, _RTN_ANYCAST, _RTN_PROHIBIT = 2, 3, 4, 8
_RTPROT_STATIC = 4
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port
_RTMSG = struct.Struct("=BBBBBBBBI")  # family, dst_len, src_len, tos, table, protocol,
#                                       scope, type, flags
_ATTR = struct.Struct("=HH")  # rtattr: length, type
_NS_GET_USERNS = 0xB701  # ioctl: the user namespace that owns a namespace
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _align(length: int) -> int:
    return (length + 3) & ~3


def _attribute(kind: int, data: bytes) -> bytes:
    body = _ATTR.pack(_ATTR.size + len(data), kind) + data
    return body + b"\0" * (_align(len(body)) - len(body))


def _messages(sock: socket.socket, sequence: int) -> list[tuple[int, bytes]]:
    """The kernel's answer to request `sequence`: (type, payload) up to its end, raising
    the error it reports."""
    found: list[tuple[int, bytes]] = []
    while True:
        data = sock.recv(1 << 16)
        offset = 0
        while offset + _HEADER.size <= len(data):
            length, kind, _flags, seq, _port = _HEADER.unpack_from(data, offset)
            payload = data[offset + _HEADER.size : offset + length]
            offset += _align(length)
            if seq != sequence:
                continue
            if kind == _NLMSG_DONE:
                return found
            if kind == _NLMSG_ERROR:
                code = -struct.unpack_from("=i", payload)[0]
                if code:
                    raise OSError(code, os.strerror(code))
                return found  # the acknowledgement of a request
            found.append((kind, payload))


def _request(kind: int, flags: int, body: bytes, sequence: int) -> bytes:
    return _HEADER.pack(_HEADER.size + len(body), kind, _NLM_F_REQUEST | flags, sequence, 0) + body


def local_destinations() -> list[Network]:
    """Every destination this network namespace delivers to itself: its addresses (IPv4
    and IPv6, secondary ones and whole local prefixes included), their broadcast and
    anycast addresses; the kernel's local routing table lists exactly these."""
    found: list[Network] = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as sock:
        query = _RTMSG.pack(socket.AF_UNSPEC, 0, 0, 0, 0, 0, 0, 0, 0)
        sock.send(_request(_RTM_GETROUTE, _NLM_F_DUMP, query, 1))
        for kind, payload in _messages(sock, 1):
            if kind != _RTM_NEWROUTE or len(payload) < _RTMSG.size:  # one route each
                continue
            family, dst_len, _, _, table, _, _, route_type, _ = _RTMSG.unpack_from(payload)
            attributes = _attributes(payload[_RTMSG.size :])
            if _RTA_TABLE in attributes:
                table = struct.unpack("=I", attributes[_RTA_TABLE])[0]
            if table != _RT_TABLE_LOCAL or _RTA_DST not in attributes:
                continue
            if route_type in (_RTN_LOCAL, _RTN_BROADCAST, _RTN_ANYCAST):
                address = socket.inet_ntop(family, attributes[_RTA_DST])
                found.append(ipaddress.ip_network(f"{address}/{dst_len}", strict=False))
    return found


def _attributes(data: bytes) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    offset = 0
    while offset + _ATTR.size <= len(data):
        length, kind = _ATTR.unpack_from(data, offset)
        if length < _ATTR.size:
            break
        found[kind] = data[offset + _ATTR.size : offset + length]
        offset += _align(length)
    return found


def add_prohibit_routes(networks: list[Network]) -> None:
    """In this process's network namespace: a `prohibit` route for each network, so that
    connecting there fails at once (EACCES) whatever other route would carry it."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as sock:
        for sequence, network in enumerate(networks, start=1):
            family = socket.AF_INET if network.version == 4 else socket.AF_INET6
            route = _RTMSG.pack(
                family, network.prefixlen, 0, 0, _RT_TABLE_MAIN, _RTPROT_STATIC, 0, _RTN_PROHIBIT, 0
            )
            body = route + _attribute(_RTA_DST, network.network_address.packed)
            flags = _NLM_F_ACK | _NLM_F_CREATE | _NLM_F_REPLACE
            sock.send(_request(_RTM_NEWROUTE, flags, body, sequence))
            _messages(sock, sequence)


def network_namespace_owner(pid: int) -> int:
    """A descriptor of the user namespace that owns `pid`'s network namespace: the one to
    join to configure it. (Under bubblewrap's --disable-userns the sandbox's processes sit
    in a user namespace nested below that owner, where joining the network fails.)"""
    net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        return int(fcntl.ioctl(net, _NS_GET_USERNS))
    finally:
        os.close(net)


def _enter_network_namespace(pid: int) -> None:
    """Join the network namespace of `pid`, by way of the user namespace that owns it
    when that is not ours (the kernel grants that namespace's owner every capability)."""
    libc = ctypes.CDLL(None, use_errno=True)

    def join(fd: int, kind: int) -> None:
        if libc.setns(fd, kind) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"setns: {os.strerror(code)}")

    owner = network_namespace_owner(pid)
    net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    ours, theirs = os.stat("/proc/self/ns/user"), os.fstat(owner)
    if (theirs.st_dev, theirs.st_ino) != (ours.st_dev, ours.st_ino):
        join(owner, _CLONE_NEWUSER)
    join(net, _CLONE_NEWNET)
    os.close(owner)
    os.close(net)


def _main(argv: list[str]) -> int:
    """`PID PREFIX...`: prohibit routes for the prefixes in PID's network namespace, and no
    IPv6 on interfaces made there later (the uplink carries none)."""
    try:
        networks = [ipaddress.ip_network(text) for text in argv[1:]]
        _enter_network_namespace(int(argv[0]))
        if os.path.exists("/proc/sys/net/ipv6"):
            with open("/proc/sys/net/ipv6/conf/default/disable_ipv6", "w") as setting:
                setting.write("1")
        else:  # the kernel runs without IPv6
            networks = [n for n in networks if n.version == 4]
        add_prohibit_routes(networks)
    except (OSError, ValueError) as exc:
        print(f"could not add the sandbox's routes: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

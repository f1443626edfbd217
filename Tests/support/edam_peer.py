#!/usr/bin/env python3
"""Independent peer for enlog's Swift Thrift/EDAM code, built on the PyPI `evernote3` SDK's
generated classes and its bundled Thrift runtime (not on anything we wrote).

  edam_peer.py decode-call FILE      read one CALL message, print {"name","type","seqid","args"} as JSON
  edam_peer.py encode-replies DIR    write reply messages (see REPLIES) as DIR/<name>.bin

The SDK's TMemoryBuffer is text-based on Python 3, so a bytes transport is used instead.
"""
import json
import sys

from thrift.Thrift import TMessageType, TType
from thrift.protocol import TBinaryProtocol

from evernote.edam.error import ttypes as Errors
from evernote.edam.notestore import NoteStore
from evernote.edam.type import ttypes as Types
from evernote.edam.userstore import UserStore

from thriftkit import BytesTransport
from serverkit import thrift_to_json


def to_json(value):
    return thrift_to_json(value, render_bytes=lambda data: {"hex": data.hex()})


def decode_call(path):
    with open(path, "rb") as f:
        data = f.read()
    transport = BytesTransport(data)
    protocol = TBinaryProtocol.TBinaryProtocol(transport)
    name, mtype, seqid = protocol.readMessageBegin()
    name = name.decode("utf-8") if isinstance(name, bytes) else name
    args_class = getattr(NoteStore, name + "_args", None) or getattr(UserStore, name + "_args")
    args = args_class()
    args.read(protocol)
    protocol.readMessageEnd()
    leftover = len(transport.buffer.read())
    print(json.dumps({"name": name, "type": mtype, "seqid": seqid, "args": to_json(args),
                      "leftover": leftover}, sort_keys=True))


def sample_note():
    return Types.Note(
        guid="3c1f5e0a-6b7d-4e8f-9a0b-1c2d3e4f5a6b",
        title="Peer note \u00e9\u6f22",
        content='<?xml version="1.0" encoding="UTF-8"?><en-note>peer</en-note>',
        contentHash=bytes(range(16)),
        contentLength=61,
        created=1700000000000,
        updated=1700000001000,
        active=True,
        updateSequenceNum=4242,
        notebookGuid="0f0e0d0c-0b0a-0908-0706-050403020100",
        tagGuids=["aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"],
        tagNames=["LocationHistory", "peer"],
        attributes=Types.NoteAttributes(
            subjectDate=1699999999000, latitude=35.681236, longitude=139.767125, altitude=-12.5,
            sourceApplication="peer.py",
            applicationData=Types.LazyMap(fullMap={"enlog.id": "q-1", "enlog.v": "2"}),
            classifications={"k": "v"}),
        resources=[Types.Resource(
            guid="11111111-2222-3333-4444-555555555555",
            mime="image/png", width=640, height=-2, active=True,
            data=Types.Data(bodyHash=bytes([0xde, 0xad, 0xbe, 0xef] * 4), size=3, body=b"\x00\xff\x7f"),
            attributes=Types.ResourceAttributes(fileName="map.png", latitude=1.5,
                                                applicationData=Types.LazyMap(keysOnly={"x1", "x2"})))],
    )


def reply(name, seqid, result, strict=True):
    transport = BytesTransport()
    protocol = TBinaryProtocol.TBinaryProtocol(transport, strictWrite=strict)
    protocol.writeMessageBegin(name, TMessageType.REPLY, seqid)
    result.write(protocol)
    protocol.writeMessageEnd()
    return transport.getvalue()


REPLIES = {
    "createNote_success": lambda: reply("createNote", 3, NoteStore.createNote_result(success=sample_note())),
    "createNote_userException": lambda: reply("createNote", 4, NoteStore.createNote_result(
        userException=Errors.EDAMUserException(errorCode=Errors.EDAMErrorCode.BAD_DATA_FORMAT,
                                               parameter="Note.title"))),
    "createNote_rateLimit": lambda: reply("createNote", 5, NoteStore.createNote_result(
        systemException=Errors.EDAMSystemException(errorCode=Errors.EDAMErrorCode.RATE_LIMIT_REACHED,
                                                   message="slow down", rateLimitDuration=1234))),
    "createNote_notFound": lambda: reply("createNote", 6, NoteStore.createNote_result(
        notFoundException=Errors.EDAMNotFoundException(identifier="Note.notebookGuid", key="nb-1"))),
    "listNotebooks_success": lambda: reply("listNotebooks", 7, NoteStore.listNotebooks_result(success=[
        Types.Notebook(guid="nb-1", name="Location Log", updateSequenceNum=10, defaultNotebook=False,
                       serviceCreated=1600000000000, serviceUpdated=1600000005000, stack="Logs",
                       published=True, sharedNotebookIds=[1, 2, 3],
                       restrictions=Types.NotebookRestrictions(noCreateNotes=False)),
        Types.Notebook(guid="nb-2", name="Inbox", defaultNotebook=True),
    ])),
    # Old non-strict message header, as the 2013 iOS SDK wrote it.
    "listNotebooks_nonstrict": lambda: reply("listNotebooks", 8, NoteStore.listNotebooks_result(success=[
        Types.Notebook(guid="nb-3", name="Old")]), strict=False),
    "getUser_success": lambda: reply("getUser", 9, UserStore.getUser_result(success=Types.User(
        id=77, username="peer", email="peer@example.invalid", name="Peer", timezone="Asia/Tokyo",
        privilege=1, created=1500000000000, updated=1500000000001, active=True,
        shardId="s1", attributes=Types.UserAttributes(defaultLocationName="Tokyo")))),
}


def encode_replies(directory):
    for name, build in REPLIES.items():
        with open("%s/%s.bin" % (directory, name), "wb") as f:
            f.write(build())
    print(json.dumps(sorted(REPLIES)))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "decode-call":
        decode_call(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "encode-replies":
        encode_replies(sys.argv[2])
    else:
        sys.exit(__doc__)

#!/usr/bin/env python3
"""EDAM test server for enlog, built on the official SDK's generated code (PyPI `evernote3`:
its UserStore/NoteStore `Processor` classes, types and bundled Thrift runtime). Never install
PyPI `thrift` next to it (it replaces that runtime).

  evernote_server.py --port 0 --token TOKEN [--token TOKEN2 ...] [--print-port] [--watch-stdin]

Plain HTTP on 127.0.0.1 only:
  POST /edam/user             UserStore (checkVersion, getUser, getUserUrls, getNoteStoreUrl)
  POST /shard/s1/notestore    NoteStore (listNotebooks, getDefaultNotebook, createNotebook, listTags,
                              createNote, deleteNote, findNotesMetadata, getNote, getNoteApplicationDataEntry)
  GET  /_test/notes           JSON: every stored note, field by field (all accounts); resources with
                              their body (base64), its MD5 and length as Python computes them
  GET  /_test/requests        JSON: every Thrift request: path, method, seqid, headers of interest
  GET  /_test/count?method=M  JSON {"count": n}: Thrift requests of method M so far
  GET  /_test/fail?status=N&count=C   the next C Thrift requests get HTTP N with an HTML page
  GET  /_test/inject?kind=user|system|drop|garbage|delay|close-idle&method=M&code=EDAMErrorCode&parameter=P
                    &duration=S&ms=N&match=TEXT&count=C   fault injection (sync copy only)
HTTP/1.1 keep-alive: a connection serves requests until the client closes it (or an injection
does); each request's record says which request of its connection it was (`on_connection`, 1 =
the first). drop on a kept-alive connection is the re-send hazard's first half (the note is
stored, the connection closes without a reply); close-idle reads the next request that arrives
on an already used (kept-alive) connection and closes it unprocessed, as a server timing out
an idle connection just as the request arrives. deleteNote moves a note to the trash (active
false); findNotesMetadata lists active notes unless NoteFilter.inactive.
  GET  /_test/clear   forget pending injections
  POST /_test/import-enex?token=T&notebook=NAME   an ENEX file imported as an Evernote client's
                    File > Import does, as far as the API shows it: a new notebook, and each <note>
                    created in it with its tags, attributes (applicationData included), resources,
                    and created/updated to the second, as the file says. JSON {"guids": [...]}.
findNotesMetadata honours NoteFilter.words for `applicationData:KEY` and plain words, and
NoteFilter.order CREATED/UPDATED (sync copy only).
Each --token is its own account (user id 1, 2, ...); any other token gets EDAMUserException
INVALID_AUTH "authenticationToken". Unknown methods get the SDK's TApplicationException.
--print-port prints PORT=<n> once listening; --watch-stdin exits when stdin reaches EOF.
--host ADDR listens there (default 127.0.0.1; e.g. an address inside a network namespace);
--tls-cert PEM --tls-key PEM serve HTTPS; --public-url URL is the base URL the service hands out.
"""
import argparse
import base64
import calendar
import copy
import hashlib
import json
import os
import signal
import sys
import threading
import time
import uuid
import xml.etree.ElementTree as ElementTree
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.protocol import TBinaryProtocol

from evernote.edam.error import ttypes as Errors
from evernote.edam.notestore import NoteStore
from evernote.edam.notestore import ttypes as NSTypes
from evernote.edam.type import ttypes as Types
from evernote.edam.userstore import UserStore
from evernote.edam.userstore import ttypes as USTypes
from thriftkit import BytesTransport
from serverkit import QuietServer, thrift_to_json, exit_when_stdin_closes, unblock_signals

USER_STORE_PATH = "/edam/user"
NOTE_STORE_PATH = "/shard/s1/notestore"


# ---------------------------------------------------------------------------------------------
# Bytes transport and protocol (the SDK's TMemoryBuffer is text-based on Python 3, and its
# readMessageBegin returns the method name as bytes, which the Processor cannot look up).

class Protocol(TBinaryProtocol.TBinaryProtocol):
    def __init__(self, trans):
        TBinaryProtocol.TBinaryProtocol.__init__(self, trans, strictRead=False, strictWrite=True)

    def readMessageBegin(self):
        name, mtype, seqid = TBinaryProtocol.TBinaryProtocol.readMessageBegin(self)
        if isinstance(name, bytes):
            name = name.decode("utf-8")
        return name, mtype, seqid


# ---------------------------------------------------------------------------------------------
# UserStore.getUserUrls is newer (EDAM 1.28) than evernote3's generated code (1.25): its structs
# are written here in the generated code's style, on the same runtime.

class UserUrls(object):
    FIELDS = ["noteStoreUrl", "webApiUrlPrefix", "userStoreUrl", "utilityUrl", "messageStoreUrl",
              "userWebSocketUrl"]

    def __init__(self, **values):
        for name in self.FIELDS:
            setattr(self, name, values.get(name))

    def write(self, oprot):
        oprot.writeStructBegin("UserUrls")
        for fid, name in enumerate(self.FIELDS, start=1):
            value = getattr(self, name)
            if value is not None:
                oprot.writeFieldBegin(name, TType.STRING, fid)
                oprot.writeString(value.encode("utf-8"))
                oprot.writeFieldEnd()
        oprot.writeFieldStop()
        oprot.writeStructEnd()


class getUserUrls_args(object):
    def __init__(self):
        self.authenticationToken = None

    def read(self, iprot):
        iprot.readStructBegin()
        while True:
            (_, ftype, fid) = iprot.readFieldBegin()
            if ftype == TType.STOP:
                break
            if fid == 1 and ftype == TType.STRING:
                self.authenticationToken = iprot.readString().decode("utf-8")
            else:
                iprot.skip(ftype)
            iprot.readFieldEnd()
        iprot.readStructEnd()


class getUserUrls_result(object):
    def __init__(self):
        self.success = None
        self.userException = None
        self.systemException = None

    def write(self, oprot):
        oprot.writeStructBegin("getUserUrls_result")
        for fid, name, ftype in ((0, "success", TType.STRUCT), (1, "userException", TType.STRUCT),
                                 (2, "systemException", TType.STRUCT)):
            value = getattr(self, name)
            if value is not None:
                oprot.writeFieldBegin(name, ftype, fid)
                value.write(oprot)
                oprot.writeFieldEnd()
        oprot.writeFieldStop()
        oprot.writeStructEnd()


class UserStoreProcessor(UserStore.Processor):
    def __init__(self, handler):
        UserStore.Processor.__init__(self, handler)
        self._processMap["getUserUrls"] = UserStoreProcessor.process_getUserUrls

    def process_getUserUrls(self, seqid, iprot, oprot):
        args = getUserUrls_args()
        args.read(iprot)
        iprot.readMessageEnd()
        result = getUserUrls_result()
        try:
            result.success = self._handler.getUserUrls(args.authenticationToken)
        except Errors.EDAMUserException as e:
            result.userException = e
        except Errors.EDAMSystemException as e:
            result.systemException = e
        oprot.writeMessageBegin("getUserUrls", TMessageType.REPLY, seqid)
        result.write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()


# ---------------------------------------------------------------------------------------------
# The service

def now_ms():
    return int(time.time() * 1000)


def user_error(code, parameter):
    return Errors.EDAMUserException(errorCode=code, parameter=parameter)


def not_found(identifier, key):
    return Errors.EDAMNotFoundException(identifier=identifier, key=key)


class Account(object):
    def __init__(self, user_id, token):
        self.user_id = user_id
        self.token = token
        self.usn = 0
        self.notebooks = []
        self.tags = []
        self.notes = []
        created = now_ms()
        self.notebooks.append(Types.Notebook(guid=str(uuid.uuid4()), name="First Notebook",
                                             updateSequenceNum=self.next_usn(), defaultNotebook=True,
                                             serviceCreated=created, serviceUpdated=created))

    def next_usn(self):
        self.usn += 1
        return self.usn

    def default_notebook(self):
        return next((nb for nb in self.notebooks if nb.defaultNotebook), self.notebooks[0])

    def notebook(self, guid):
        return next((nb for nb in self.notebooks if nb.guid == guid), None)

    def tag_named(self, name):
        return next((tag for tag in self.tags if tag.name.lower() == name.lower()), None)

    def tag(self, guid):
        return next((tag for tag in self.tags if tag.guid == guid), None)

    def note(self, guid):
        return next((note for note in self.notes if note.guid == guid), None)


class Service(object):
    """Implements the methods of both UserStore.Iface and NoteStore.Iface that enlog uses."""

    def __init__(self, tokens, base_url):
        self.lock = threading.RLock()
        self.calls = threading.Lock()
        self.base_url = base_url
        self.accounts = {}
        for i, token in enumerate(tokens, start=1):
            self.accounts[token] = Account(i, token)

    def account(self, token):
        if not token:
            raise user_error(Errors.EDAMErrorCode.DATA_REQUIRED, "authenticationToken")
        account = self.accounts.get(token)
        if account is None:
            raise user_error(Errors.EDAMErrorCode.INVALID_AUTH, "authenticationToken")
        return account

    # UserStore
    def checkVersion(self, clientName, edamVersionMajor, edamVersionMinor):
        return edamVersionMajor == 1 and edamVersionMinor >= 20

    def getUser(self, authenticationToken):
        a = self.account(authenticationToken)
        return Types.User(id=a.user_id, username="tester%d" % a.user_id, name="Test User %d" % a.user_id,
                          timezone="UTC", privilege=Types.PrivilegeLevel.NORMAL, created=1700000000000,
                          updated=1700000000000, active=True, shardId="s1")

    def getUserUrls(self, authenticationToken):
        self.account(authenticationToken)
        return UserUrls(noteStoreUrl=self.base_url + NOTE_STORE_PATH,
                        webApiUrlPrefix=self.base_url + "/shard/s1/",
                        userStoreUrl=self.base_url + USER_STORE_PATH)

    def getNoteStoreUrl(self, authenticationToken):
        self.account(authenticationToken)
        return self.base_url + NOTE_STORE_PATH

    # NoteStore
    def listNotebooks(self, authenticationToken):
        return list(self.account(authenticationToken).notebooks)

    def getDefaultNotebook(self, authenticationToken):
        return self.account(authenticationToken).default_notebook()

    def createNotebook(self, authenticationToken, notebook):
        a = self.account(authenticationToken)
        if notebook is None or not notebook.name or not notebook.name.strip():
            raise user_error(Errors.EDAMErrorCode.DATA_REQUIRED, "Notebook.name")
        if len(notebook.name) > 100 or notebook.name != notebook.name.strip():
            raise user_error(Errors.EDAMErrorCode.BAD_DATA_FORMAT, "Notebook.name")
        if any(nb.name.lower() == notebook.name.lower() for nb in a.notebooks):
            raise user_error(Errors.EDAMErrorCode.DATA_CONFLICT, "Notebook.name")
        created = now_ms()
        nb = Types.Notebook(guid=str(uuid.uuid4()), name=notebook.name, updateSequenceNum=a.next_usn(),
                            defaultNotebook=bool(notebook.defaultNotebook), serviceCreated=created,
                            serviceUpdated=created, stack=notebook.stack)
        if nb.defaultNotebook:
            for other in a.notebooks:
                other.defaultNotebook = False
        a.notebooks.append(nb)
        return nb

    def listTags(self, authenticationToken):
        return list(self.account(authenticationToken).tags)

    def createNote(self, authenticationToken, note):
        a = self.account(authenticationToken)
        if note is None:
            raise user_error(Errors.EDAMErrorCode.DATA_REQUIRED, "Note")
        if note.title is None or not (1 <= len(note.title) <= 255) or note.title != note.title.strip():
            raise user_error(Errors.EDAMErrorCode.BAD_DATA_FORMAT, "Note.title")
        if not note.content:
            raise user_error(Errors.EDAMErrorCode.DATA_REQUIRED, "Note.content")
        if note.notebookGuid is None:
            notebook = a.default_notebook()
        else:
            notebook = a.notebook(note.notebookGuid)
            if notebook is None:
                raise not_found("Note.notebookGuid", note.notebookGuid)
        stored = copy.deepcopy(note)
        stored.guid = str(uuid.uuid4())
        stored.notebookGuid = notebook.guid
        stored.active = True
        content = note.content.encode("utf-8")
        stored.contentHash = hashlib.md5(content).digest()
        stored.contentLength = len(content)
        stored.created = note.created or now_ms()
        stored.updated = note.updated or stored.created
        tag_guids = list(note.tagGuids or [])
        for guid in tag_guids:
            if a.tag(guid) is None:
                raise not_found("Tag.guid", guid)
        new_tags = []
        for name in note.tagNames or []:
            if not name or len(name) > 100 or "," in name or name != name.strip():
                raise user_error(Errors.EDAMErrorCode.BAD_DATA_FORMAT, "Tag.name")
            tag = a.tag_named(name) or next((t for t in new_tags if t.name.lower() == name.lower()), None)
            if tag is None:
                tag = Types.Tag(guid=str(uuid.uuid4()), name=name)
                new_tags.append(tag)
            if tag.guid not in tag_guids:
                tag_guids.append(tag.guid)
        for resource in stored.resources or []:
            if resource.data is None or resource.data.body is None:
                raise user_error(Errors.EDAMErrorCode.DATA_REQUIRED, "Resource.data")
            if not resource.mime:
                raise user_error(Errors.EDAMErrorCode.BAD_DATA_FORMAT, "Resource.mime")
            digest = hashlib.md5(resource.data.body).digest()
            if resource.data.bodyHash is not None and resource.data.bodyHash != digest:
                raise user_error(Errors.EDAMErrorCode.BAD_DATA_FORMAT, "Resource.data.bodyHash")
            if resource.data.size is not None and resource.data.size != len(resource.data.body):
                raise user_error(Errors.EDAMErrorCode.BAD_DATA_FORMAT, "Resource.data.size")
            resource.data.bodyHash = digest
            resource.data.size = len(resource.data.body)
            resource.guid = str(uuid.uuid4())
            resource.noteGuid = stored.guid
            resource.active = True
        for tag in new_tags:
            tag.updateSequenceNum = a.next_usn()
            a.tags.append(tag)
        stored.tagGuids = tag_guids or None
        stored.tagNames = [a.tag(g).name for g in tag_guids] or None
        stored.updateSequenceNum = a.next_usn()
        for resource in stored.resources or []:
            resource.updateSequenceNum = stored.updateSequenceNum
        a.notes.append(stored)
        return self._without_bodies(stored, with_content=False)

    @staticmethod
    def _without_bodies(note, with_content, with_resource_data=False):
        out = copy.deepcopy(note)
        out.tagNames = None
        if not with_content:
            out.content = None
        for resource in out.resources or []:
            if not with_resource_data and resource.data is not None:
                resource.data.body = None
            resource.recognition = None
            resource.alternateData = None
        return out

    def findNotesMetadata(self, authenticationToken, filter, offset, maxNotes, resultSpec):
        a = self.account(authenticationToken)
        if offset is None or offset < 0:
            raise user_error(Errors.EDAMErrorCode.DATA_REQUIRED, "offset")
        if maxNotes is None or maxNotes < 1:
            raise user_error(Errors.EDAMErrorCode.DATA_REQUIRED, "maxNotes")
        filter = filter or NSTypes.NoteFilter()
        spec = resultSpec or NSTypes.NotesMetadataResultSpec()
        notes = [n for n in a.notes if filter.notebookGuid is None or n.notebookGuid == filter.notebookGuid]
        notes = [n for n in notes if bool(n.active) != bool(filter.inactive)]
        notes = [n for n in notes if matches_words(n, filter.words)]
        if filter.order == Types.NoteSortOrder.CREATED:
            notes = sorted(notes, key=lambda n: n.created or 0, reverse=not filter.ascending)
        elif filter.order == Types.NoteSortOrder.UPDATED:
            notes = sorted(notes, key=lambda n: n.updated or 0, reverse=not filter.ascending)
        page = notes[offset:offset + min(maxNotes, 250)]
        out = []
        for n in page:
            m = NSTypes.NoteMetadata(guid=n.guid)
            for name in ("title", "contentLength", "created", "updated", "updateSequenceNum", "notebookGuid", "tagGuids"):
                if getattr(spec, "include" + name[0].upper() + name[1:]):
                    setattr(m, name, getattr(n, name))
            if spec.includeAttributes:
                # Like the service: applicationData comes back as keysOnly in metadata.
                m.attributes = copy.deepcopy(n.attributes)
                app = m.attributes.applicationData if m.attributes else None
                if app is not None:
                    keys = set(app.keysOnly or []) | set((app.fullMap or {}).keys())
                    m.attributes.applicationData = Types.LazyMap(keysOnly=keys)
            out.append(m)
        return NSTypes.NotesMetadataList(startIndex=offset, totalNotes=len(notes), notes=out,
                                         updateCount=a.usn)

    def getNote(self, authenticationToken, guid, withContent, withResourcesData,
                withResourcesRecognition, withResourcesAlternateData):
        a = self.account(authenticationToken)
        note = a.note(guid)
        if note is None:
            raise not_found("Note.guid", guid)
        return self._without_bodies(note, bool(withContent), bool(withResourcesData))

    def deleteNote(self, authenticationToken, guid):
        a = self.account(authenticationToken)
        note = a.note(guid)
        if note is None or not note.active:
            raise not_found("Note.guid", guid)
        note.active = False
        note.deleted = now_ms()
        note.updateSequenceNum = a.next_usn()
        return note.updateSequenceNum

    def getNoteApplicationDataEntry(self, authenticationToken, guid, key):
        a = self.account(authenticationToken)
        note = a.note(guid)
        if note is None:
            raise not_found("Note.guid", guid)
        app = note.attributes.applicationData if note.attributes else None
        full = (app.fullMap or {}) if app else {}
        if key not in full:
            raise not_found("NoteAttributes.applicationData", key)
        return full[key]


def app_keys(note):
    app = note.attributes.applicationData if note.attributes else None
    if app is None:
        return set()
    return set(app.keysOnly or []) | set((app.fullMap or {}).keys())


def matches_words(note, words):
    """A subset of the Evernote search grammar: `applicationData:KEY` (the note has KEY in its
    applicationData; `applicationData:*` any key), `-` negation, and plain words that must occur
    in the title or content (case-insensitive)."""
    if not words:
        return True
    for term in words.split():
        negate = term.startswith("-")
        if negate:
            term = term[1:]
        if term.lower().startswith("applicationdata:"):
            key = term.split(":", 1)[1].strip('"')
            keys = app_keys(note)
            hit = bool(keys) if key == "*" else key in keys
        else:
            text = ((note.title or "") + " " + (note.content or "")).lower()
            hit = term.strip('"').lower() in text
        if hit == negate:
            return False
    return True



# ---------------------------------------------------------------------------------------------
# ENEX import for /_test/import-enex (stdlib XML only: nothing of enlog's)
def enex_time(text):
    return calendar.timegm(time.strptime(text.strip(), "%Y%m%dT%H%M%SZ")) * 1000 if text else None


def enex_number(text, kind=float):
    return kind(text) if text is not None and text.strip() else None


def import_enex(service, token, notebook_name, data):
    root = ElementTree.fromstring(data)
    notebook = service.createNotebook(token, Types.Notebook(name=notebook_name))
    guids = []
    for element in root.findall("note"):
        attributes = Types.NoteAttributes()
        found = element.find("note-attributes")
        for child in (found if found is not None else []):
            text = child.text or ""
            if child.tag == "application-data":
                if attributes.applicationData is None:
                    attributes.applicationData = Types.LazyMap(fullMap={})
                attributes.applicationData.fullMap[child.get("key")] = text
            elif child.tag in ("latitude", "longitude", "altitude"):
                setattr(attributes, child.tag, enex_number(text))
            elif child.tag == "subject-date":
                attributes.subjectDate = enex_time(text)
            elif child.tag in ("source", "author", "source-application", "place-name", "content-class"):
                setattr(attributes, {"source-application": "sourceApplication", "place-name": "placeName",
                                     "content-class": "contentClass"}.get(child.tag, child.tag), text)
        resources = []
        for item in element.findall("resource"):
            body = base64.b64decode("".join((item.findtext("data") or "").split()))
            resource_attributes = Types.ResourceAttributes()
            found = item.find("resource-attributes")
            if found is not None:
                resource_attributes.fileName = found.findtext("file-name")
                resource_attributes.attachment = found.findtext("attachment") == "true" or None
                resource_attributes.latitude = enex_number(found.findtext("latitude"))
                resource_attributes.longitude = enex_number(found.findtext("longitude"))
                resource_attributes.timestamp = enex_time(found.findtext("timestamp"))
            resources.append(Types.Resource(
                data=Types.Data(body=body, bodyHash=hashlib.md5(body).digest(), size=len(body)),
                mime=item.findtext("mime"), width=enex_number(item.findtext("width"), int),
                height=enex_number(item.findtext("height"), int), attributes=resource_attributes))
        note = Types.Note(title=element.findtext("title"), content=element.findtext("content"),
                          created=enex_time(element.findtext("created")), updated=enex_time(element.findtext("updated")),
                          notebookGuid=notebook.guid, tagNames=[t.text for t in element.findall("tag")] or None,
                          attributes=attributes, resources=resources or None)
        guids.append(service.createNote(token, note).guid)
    return guids


# JSON view for /_test/notes



def note_json(account, note):
    out = thrift_to_json(note)
    out["account"] = account.user_id
    out["tagNames"] = [account.tag(g).name for g in (note.tagGuids or [])]
    attributes = out.get("attributes", {})
    app = note.attributes.applicationData if note.attributes else None
    if app is not None:
        attributes["applicationData"] = {"keysOnly": sorted(app.keysOnly) if app.keysOnly is not None else None,
                                         "fullMap": dict(app.fullMap) if app.fullMap is not None else None}
    out["attributes"] = attributes
    resources = []
    for r in note.resources or []:
        body = r.data.body if r.data else None
        resources.append({
            "guid": r.guid, "noteGuid": r.noteGuid, "mime": r.mime, "width": r.width, "height": r.height,
            "size": len(body) if body is not None else None,
            "md5": hashlib.md5(body).hexdigest() if body is not None else None,
            "bodyHash": r.data.bodyHash.hex() if r.data and r.data.bodyHash else None,
            "dataSize": r.data.size if r.data else None,
            "body": base64.b64encode(body).decode("ascii") if body is not None else None,
            "attributes": thrift_to_json(r.attributes) if r.attributes else {},
        })
    out["resources"] = resources
    return out


# ---------------------------------------------------------------------------------------------
# HTTP

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "enlog-edam-test/1"
    # TCP_NODELAY, as services serving kept-alive connections set it: a reply is written as
    # headers then body, and with Nagle on the body would wait for the client's delayed ACK
    # (40 ms) on every request of a kept-alive connection.
    disable_nagle_algorithm = True

    def setup(self):
        BaseHTTPRequestHandler.setup(self)
        self.served = 0   # requests read on this connection so far

    def log_message(self, format, *args):
        if self.server.verbose:
            BaseHTTPRequestHandler.log_message(self, format, *args)

    def _send(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _hang_up(self):
        """Closes this connection without a reply (what a server that dies or times out does)."""
        self.close_connection = True
        try:
            self.connection.shutdown(2)
        except OSError:
            pass

    def _json(self, obj):
        self._send(200, json.dumps(obj, sort_keys=True, indent=1).encode(), "application/json")

    def do_GET(self):
        url = urlparse(self.path)
        service = self.server.service
        if url.path == "/_test/notes":
            with service.lock:
                notes = [note_json(a, n) for a in service.accounts.values() for n in a.notes]
            self._json(notes)
        elif url.path == "/_test/requests":
            with service.lock:
                self._json(list(self.server.requests))
        elif url.path == "/_test/count":
            # How many Thrift requests of one method arrived (cheap enough to poll).
            method = parse_qs(url.query).get("method", [None])[0]
            with service.lock:
                self._json({"count": sum(1 for r in self.server.requests if r.get("method") == method)})
        elif url.path == "/_test/inject":
            # kind: user|system (EDAM exception with code/parameter/duration), drop (process the
            # call, then close the socket without replying), garbage (process, reply junk bytes),
            # delay (sleep ms then process). method: Thrift method; match: substring of the body.
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            with service.lock:
                self.server.injections.append({
                    "kind": query.get("kind", "system"), "method": query.get("method", "createNote"),
                    "code": query.get("code", "INTERNAL_ERROR"), "parameter": query.get("parameter"),
                    "duration": int(query["duration"]) if "duration" in query else None,
                    "ms": int(query.get("ms", "0")),
                    "match": query.get("match"), "count": int(query.get("count", "1"))})
            self._json({"ok": True})
        elif url.path == "/_test/clear":
            with service.lock:
                self.server.injections = []
                self.server.fail_count = 0
            self._json({"ok": True})
        elif url.path == "/_test/fail":
            query = parse_qs(url.query)
            with service.lock:
                self.server.fail_status = int(query.get("status", ["503"])[0])
                self.server.fail_count = int(query.get("count", ["1"])[0])
            self._json({"ok": True})
        else:
            self._send(404, b"<html><head><title>404 Not Found</title></head></html>", "text/html")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length > 0 else b""
        self.served += 1
        path = urlparse(self.path).path
        if path == "/_test/import-enex":
            query = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
            with self.server.service.lock:
                try:
                    guids = import_enex(self.server.service, query.get("token"), query.get("notebook", "Imported Notes"), data)
                except Exception as err:  # the test sees why
                    self._send(400, ("%s: %s" % (type(err).__name__, err)).encode(), "text/plain")
                    return
            self._json({"guids": guids})
            return
        if path == USER_STORE_PATH:
            processor = self.server.user_store
        elif path == NOTE_STORE_PATH:
            processor = self.server.note_store
        else:
            self._send(404, b"<html><head><title>404 Not Found</title></head></html>", "text/html")
            return
        service = self.server.service
        # Calls are served one at a time (`calls`); `lock` guards the state the /_test endpoints
        # read, and is let go while a call sleeps for an injected delay, so a test can see the
        # delayed call arrive while later calls still wait behind it.
        with service.calls, service.lock:
            record = {"path": path, "content_type": self.headers.get("Content-Type"),
                      "accept": self.headers.get("Accept"), "user_agent": self.headers.get("User-Agent"),
                      "length": len(data), "on_connection": self.served}
            try:
                name, mtype, seqid = Protocol(BytesTransport(data)).readMessageBegin()
                record.update({"method": name, "type": mtype, "seqid": seqid})
            except Exception as e:  # noqa: BLE001 - recorded for the test to see
                record["error"] = repr(e)
            self.server.requests.append(record)
            if self.server.fail_count > 0:
                self.server.fail_count -= 1
                status = self.server.fail_status
                page = ("<html><head><title>%d Service Unavailable</title></head>"
                        "<body><h1>Try again later</h1></body></html>" % status).encode()
                self._send(status, page, "text/html; charset=utf-8")
                return
            injection = None
            for inj in self.server.injections:
                if inj["kind"] == "close-idle" and self.served == 1:
                    continue   # only a kept-alive connection's later requests
                if inj["count"] > 0 and inj["method"] == record.get("method") and (
                        inj["match"] is None or inj["match"].encode() in data):
                    inj["count"] -= 1
                    injection = inj
                    record["injected"] = inj["kind"]
                    break
            if injection is not None and injection["kind"] in ("user", "system"):
                self._send(200, exception_reply(record["method"], record["seqid"], injection),
                           "application/x-thrift")
                return
            if injection is not None and injection["kind"] == "close-idle":
                self._hang_up()
                return
            if injection is not None and injection["kind"] == "delay":
                service.lock.release()
                try:
                    time.sleep(injection["ms"] / 1000.0)
                finally:
                    service.lock.acquire()
            out = BytesTransport()
            try:
                processor.process(Protocol(BytesTransport(data)), Protocol(out))
            except Exception as e:  # noqa: BLE001 - a server bug or undecodable request
                sys.stderr.write("evernote_server: %r\n" % (e,))
                self._send(500, b"internal error", "text/plain")
                return
        if injection is not None and injection["kind"] == "drop":
            # The call was processed (the note is stored); the client never hears back.
            self._hang_up()
            return
        if injection is not None and injection["kind"] == "garbage":
            self._send(200, b"\x80\x01\x00\x02garbage-not-thrift\xff\xfe", "application/x-thrift")
            return
        self._send(200, out.getvalue(), "application/x-thrift")


def exception_reply(method, seqid, injection):
    """A REPLY carrying an EDAM exception in the method's generated result struct."""
    code = getattr(Errors.EDAMErrorCode, injection["code"])
    result = getattr(NoteStore, method + "_result")()
    if injection["kind"] == "user":
        result.userException = Errors.EDAMUserException(errorCode=code, parameter=injection["parameter"])
    else:
        result.systemException = Errors.EDAMSystemException(
            errorCode=code, message=injection["parameter"], rateLimitDuration=injection["duration"])
    out = BytesTransport()
    proto = Protocol(out)
    proto.writeMessageBegin(method, TMessageType.REPLY, seqid)
    result.write(proto)
    proto.writeMessageEnd()
    return out.getvalue()


def main():
    unblock_signals()
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", action="append", default=[])
    parser.add_argument("--print-port", action="store_true")
    parser.add_argument("--watch-stdin", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    # In a network namespace the client reaches the server by another address (or a name).
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--public-url", help="base URL the service hands out (default: the listening one)")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (and --tls-key)")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    if not args.token:
        parser.error("at least one --token is required")
    server_class = QuietServer
    if ":" in args.host:   # an IPv6 literal: the server's socket must be of that family
        import socket
        server_class = type("QuietServer6", (QuietServer,), {"address_family": socket.AF_INET6})
    server = server_class((args.host, args.port), Handler)
    server.daemon_threads = True
    server.verbose = args.verbose
    port = server.server_address[1]
    if args.tls_cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    scheme = "https" if args.tls_cert else "http"
    host = "[%s]" % args.host if ":" in args.host else args.host
    server.service = Service(args.token, args.public_url or "%s://%s:%d" % (scheme, host, port))
    server.user_store = UserStoreProcessor(server.service)
    server.note_store = NoteStore.Processor(server.service)
    server.requests = []
    server.fail_status = 503
    server.fail_count = 0
    server.injections = []
    if args.watch_stdin:
        exit_when_stdin_closes()
    if args.print_port:
        print("PORT=%d" % port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

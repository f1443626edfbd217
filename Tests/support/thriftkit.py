"""Thrift helpers shared by the SDK-based peers (evernote_server.py, edam_peer.py); needs the
`thrift` package from evernote3's dependencies, unlike serverkit.py, which is stdlib only."""
import io

from thrift.transport import TTransport


class BytesTransport(TTransport.TTransportBase):
    """A Thrift transport over bytes in memory: one request or reply at a time."""

    def __init__(self, data=b""):
        self.buffer = io.BytesIO(data)

    def isOpen(self):
        return True

    def read(self, size):
        return self.buffer.read(size)

    def readAll(self, size):
        data = self.buffer.read(size)
        if len(data) != size:
            raise EOFError("wanted %d bytes, got %d" % (size, len(data)))
        return data

    def write(self, data):
        self.buffer.write(data)

    def flush(self):
        pass

    def getvalue(self):
        return self.buffer.getvalue()

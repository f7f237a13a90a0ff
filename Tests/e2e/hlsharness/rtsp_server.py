"""A test RTSP server (GStreamer's gst-rtsp-server through PyGObject): `python3 rtsp_server.py PORT` serves a live
640x360 30 fps H.264 test source (openh264, a keyframe each second) and a 48 kHz AAC tone at
rtsp://127.0.0.1:PORT/test, over UDP or interleaved TCP as the client asks, until killed.
"""
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

LAUNCH = (
    "( videotestsrc is-live=true pattern=smpte ! video/x-raw,width=640,height=360,framerate=30/1 "
    "! openh264enc gop-size=30 bitrate=800000 ! h264parse config-interval=-1 ! rtph264pay name=pay0 pt=96 "
    "audiotestsrc is-live=true freq=440 ! audio/x-raw,rate=48000,channels=2 ! avenc_aac ! aacparse "
    "! rtpmp4gpay name=pay1 pt=97 )"
)


def main():
    port = sys.argv[1]
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(LAUNCH)
    factory.set_shared(True)
    server.get_mount_points().add_factory("/test", factory)
    if server.attach(None) == 0:
        print(f"cannot listen on 127.0.0.1:{port}", file=sys.stderr)
        sys.exit(1)
    print(f"rtsp://127.0.0.1:{port}/test", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()

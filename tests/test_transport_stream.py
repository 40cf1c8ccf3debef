"""SSE streams: backpressure, the byte-bounded queue, keepalives and close-once."""

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site

from eshu_mcp.protocol.jsonrpc import encode
from eshu_mcp.transport.stream import SseStream, event_frame, json_event_frame
from tests.support import HttpExchange


class StreamResource(Resource):
    isLeaf = True

    def __init__(self, clock, **options):
        super().__init__()
        self.clock = clock
        self.options = options
        self.streams = []

    def render_GET(self, request):
        stream = SseStream(request, self.clock, **self.options)
        self.streams.append(stream)
        stream.start(b": open\n\n")
        return NOT_DONE_YET


class SseStreamTests(SynchronousTestCase):
    def setUp(self):
        self.clock = Clock()
        self.dropped = []
        self.resource = StreamResource(
            self.clock, keepalive=30, queue_bytes=100, on_overflow=lambda: self.dropped.append(True)
        )
        self.exchange = HttpExchange(Site(self.resource, reactor=self.clock))
        self.exchange.request(b"GET", b"/")
        (self.stream,) = self.resource.streams

    def body(self) -> bytes:
        return self.exchange.response().body

    def test_frames_are_written_while_the_client_reads(self):
        self.assertTrue(self.stream.send(event_frame("message", '{"id":1}')))
        self.assertTrue(self.body().endswith(b'event: message\ndata: {"id":1}\n\n'))

    def test_paused_stream_queues_up_to_the_byte_limit(self):
        self.exchange.transport.producer.pauseProducing()
        frames = [event_frame("message", str(n)) for n in range(3)]
        self.assertEqual(len(b"".join(frames)), 72)
        self.assertEqual([self.stream.send(frame) for frame in frames], [True, True, True])
        self.assertEqual((self.stream.queued, self.stream.queued_bytes), (3, 72))
        self.assertNotIn(b"data: 0", self.body())
        self.exchange.transport.producer.resumeProducing()
        self.assertEqual((self.stream.queued, self.stream.queued_bytes), (0, 0))
        self.assertIn(b"data: 0\n\nevent: message\ndata: 1\n\nevent: message\ndata: 2", self.body())
        self.assertEqual(self.dropped, [])

    def test_a_reader_too_slow_for_the_byte_limit_is_dropped_and_counted(self):
        closed = []
        self.stream.on_close(lambda: closed.append(True))
        self.exchange.transport.producer.pauseProducing()
        sent = [self.stream.send(event_frame("message", str(n))) for n in range(6)]
        self.assertEqual(sent, [True, True, True, True, False, False])
        self.assertEqual((self.dropped, closed), ([True], [True]))
        self.assertTrue(self.stream.closed)
        self.assertEqual(self.stream.queued_bytes, 0)
        self.assertTrue(self.exchange.transport.disconnecting)

    def test_keepalive_is_skipped_while_paused(self):
        self.exchange.transport.producer.pauseProducing()
        self.clock.advance(30)
        self.assertFalse(self.body().endswith(b": keepalive\n\n"))
        self.exchange.transport.producer.resumeProducing()
        self.clock.advance(30)
        self.assertTrue(self.body().endswith(b": keepalive\n\n"))

    def test_close_is_idempotent_and_later_sends_fail(self):
        closed = []
        self.stream.on_close(lambda: closed.append(True))
        self.stream.close()
        self.stream.close()
        self.assertEqual(closed, [True])
        self.assertFalse(self.stream.send(b"event: message\ndata: x\n\n"))
        self.assertEqual([c for c in self.clock.getDelayedCalls() if "_ping" in repr(c)], [])
        self.assertTrue(self.exchange.transport.value().endswith(b"0\r\n\r\n"))

    def test_disconnect_closes_the_stream_and_stops_keepalives(self):
        self.exchange.disconnect()
        self.assertTrue(self.stream.closed)
        self.stream.close()
        self.assertFalse(self.stream.send(b"x"))
        self.assertEqual([c for c in self.clock.getDelayedCalls() if "_ping" in repr(c)], [])

    def test_many_sends_racing_a_close_never_raise(self):
        self.exchange.transport.producer.pauseProducing()
        results = []
        for n in range(64 * 50):
            if n == 1000:
                self.stream.close()
            results.append(self.stream.send(event_frame("message", str(n))))
        self.assertFalse(any(results[1000:]))


class EventFrameTests(SynchronousTestCase):
    def test_multiline_data_becomes_several_data_lines(self):
        self.assertEqual(event_frame("message", "a\nb"), b"event: message\ndata: a\ndata: b\n\n")


class JsonEventFrameTests(SynchronousTestCase):
    def test_a_json_reply_frames_as_one_data_line_like_its_text(self):
        reply = {"jsonrpc": "2.0", "id": 1, "result": {"text": "two\nlines\r\u2028 \u00e9 <&>"}}
        body = encode(reply)
        self.assertEqual(json_event_frame("message", body), event_frame("message", body.decode()))
        self.assertEqual(json_event_frame("message", body).count(b"\ndata: "), 1)


class SharedKeepaliveTests(SynchronousTestCase):
    """Idle streams share one keepalive timer, so an idle session costs no timer of its own."""

    def setUp(self):
        self.clock = Clock()
        self.resource = StreamResource(self.clock, keepalive=30)
        self.site = Site(self.resource, reactor=self.clock)
        self.exchanges = []
        for _ in range(20):
            exchange = HttpExchange(self.site)
            exchange.request(b"GET", b"/")
            self.exchanges.append(exchange)

    def keepalive_timers(self) -> list:
        return [c for c in self.clock.getDelayedCalls() if "_ping" in repr(c)]

    def test_twenty_open_streams_share_one_timer_and_each_gets_its_keepalive(self):
        self.assertEqual(len(self.keepalive_timers()), 1)
        self.clock.advance(30)
        for exchange in self.exchanges:
            self.assertTrue(exchange.response().body.endswith(b": keepalive\n\n"))

    def test_closing_some_streams_keeps_the_others_pinged_and_the_last_stops_the_timer(self):
        for exchange in self.exchanges[:19]:
            exchange.disconnect()
        self.clock.advance(30)
        self.assertTrue(self.exchanges[19].response().body.endswith(b": keepalive\n\n"))
        self.exchanges[19].disconnect()
        self.assertEqual(self.keepalive_timers(), [])

    def test_a_stream_opened_later_is_pinged_within_one_interval(self):
        self.clock.advance(20)
        late = HttpExchange(self.site)
        late.request(b"GET", b"/")
        self.clock.advance(30)
        self.assertTrue(late.response().body.endswith(b": keepalive\n\n"))

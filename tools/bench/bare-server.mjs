// The comparison server of the track benchmark: express 5 on the same machine answering 202 after express.json()
// (body parsed; no auth, no validation, no store). Prints its port once listening.
import express from 'express';

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.post('/v1/track', express.json(), (_req, res) => {
  res.status(202).json({ ok: true });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(`listening ${server.address().port}`));
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => server.close(() => process.exit(0)));

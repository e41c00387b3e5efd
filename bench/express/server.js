// The usual integrator pattern for the editor's export call, as a baseline
// for design_bridge: an Express route that takes the design JSON, adds the
// secret bearer token and posts it to the content service with axios.
//
//   UPSTREAM=http://127.0.0.1:9601 TOKEN=bench-token PORT=9604 BODY=json node server.js
//
// BODY=json parses the body with express.json() and lets axios serialise it
// again (what most integrations do); BODY=raw passes the bytes through
// (express.raw), the cheapest an Express forwarder can be.
'use strict';

const express = require('express');
const axios = require('axios');

const upstream = (process.env.UPSTREAM || 'http://127.0.0.1:9601').replace(/\/$/, '');
const token = process.env.TOKEN || 'bench-token';
const port = Number(process.env.PORT || 9604);
const host = '127.0.0.1'; // loopback only
const mode = process.env.BODY || 'json';
const limit = process.env.LIMIT || '20mb';

const app = express();
app.disable('x-powered-by');
app.use(mode === 'raw' ? express.raw({ type: '*/*', limit }) : express.json({ limit }));

app.post('/v1/message/html', async (req, res) => {
  try {
    const r = await axios.post(upstream + '/v1/message/html', req.body, {
      headers: {
        Authorization: 'Bearer ' + token,
        'Content-Type': 'application/json',
      },
      responseType: 'text',
      transformResponse: (d) => d, // pass the text through unchanged
      validateStatus: () => true, // forward upstream errors as they are
      maxBodyLength: Infinity,
      maxContentLength: Infinity,
    });
    const type = r.headers['content-type'];
    if (type) res.type(type);
    res.status(r.status).send(r.data);
  } catch (err) {
    res.status(502).json({ code: 5020, message: 'Bad gateway', details: String(err.code || err.message) });
  }
});

app.listen(port, host, () => {
  console.log(`express forwarder (${mode}) on http://${host}:${port} -> ${upstream}`);
});

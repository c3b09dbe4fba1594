// Follows the change feed's event stream with the npm `eventsource` client (2.x: a browser-style
// EventSource for Node.js that resends Last-Event-ID when it reconnects) and prints each event as a
// line of JSON as it arrives; exits after `count` events, or fails after `seconds`.
//   node changes_eventsource.js URL TOKEN COUNT SECONDS
'use strict';
const EventSource = require('eventsource');

const [url, token, count, seconds] = process.argv.slice(2);
const source = new EventSource(url, { headers: { Authorization: 'Bearer ' + token } });
let seen = 0;
let reconnections = 0;
source.onmessage = (e) => {
  process.stdout.write(JSON.stringify({ last_event_id: e.lastEventId, event: JSON.parse(e.data) }) + '\n');
  if (++seen >= Number(count)) {
    source.close();
    process.stderr.write('reconnections: ' + reconnections + '\n');
    process.exit(0);
  }
};
source.onerror = () => { ++reconnections; };  // the stream ended or the service is away: it reconnects
setTimeout(() => {
  process.stderr.write('timed out after ' + seen + ' events\n');
  process.exit(1);
}, Number(seconds) * 1000);

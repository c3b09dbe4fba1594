// Independent checks of what travels (tests/client/rights_travel.py): each ODRL policy expanded by
// `jsonld` (the ODRL context served from @digitalbazaar/odrl-context: no network) and validated
// against tests/client/odrl-shapes.ttl by `rdf-validate-shacl`; each Content-Usage header parsed by
// `structured-headers`; tdmrep.json validated by `ajv` against tests/client/tdmrep.schema.json;
// the profile (docs/odrl-profile.ttl) read by `n3` for its odrl:includedIn pairs.
//   node odrl_check.mjs MODULES INPUT.json   (prints the results as JSON)
import fs from 'fs';
import path from 'path';
import { pathToFileURL } from 'url';
import { createRequire } from 'module';

const [modules, inputPath] = process.argv.slice(2);
const load = async (name) => {
  const req = createRequire(path.join(modules, 'x.js'));
  return import(pathToFileURL(req.resolve(name)).href);
};
const jsonld = (await load('jsonld')).default;
const N3 = (await load('n3')).default;
const SHACLValidator = (await load('rdf-validate-shacl')).default;
const datasetFactory = (await load('@rdfjs/dataset')).default;
const { parseDictionary } = await load('structured-headers');
const Ajv = (await load('ajv')).default;

const input = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
const context = JSON.parse(fs.readFileSync(createRequire(path.join(modules, 'x.js'))
  .resolve('@digitalbazaar/odrl-context/contexts/odrl.jsonld'), 'utf8'));
const documentLoader = async (url) => {
  if (url === 'http://www.w3.org/ns/odrl.jsonld' || url === 'https://www.w3.org/ns/odrl.jsonld')
    return { contextUrl: null, documentUrl: url, document: context };
  throw new Error('no network in tests: ' + url);
};
const turtle = (file) => new N3.Parser({ format: 'Turtle', baseIRI: 'urn:x:' }).parse(fs.readFileSync(file, 'utf8'));
const validator = new SHACLValidator(datasetFactory.dataset(turtle(input.shapes)));

const out = { policies: {}, headers: {}, tdmrep: null, includedIn: [] };
for (const { id, doc } of input.policies) {
  try {
    const expanded = await jsonld.expand(doc, { documentLoader });
    const nquads = await jsonld.toRDF(doc, { format: 'application/n-quads', documentLoader, safe: true });
    const report = await validator.validate(datasetFactory.dataset(new N3.Parser({ format: 'N-Quads' }).parse(nquads)));
    out.policies[id] = {
      conforms: report.conforms,
      messages: report.results.map((r) => `${r.path ? r.path.value : ''}: ${r.message.map((m) => m.value).join('; ')}`),
      expanded,
    };
  } catch (e) {
    out.policies[id] = { conforms: false, messages: ['not JSON-LD: ' + e.message], expanded: null };
  }
}
for (const { id, value } of input.headers) {
  try {
    const dict = {};
    for (const [k, [v]] of parseDictionary(value)) dict[k] = typeof v === 'object' && 'value' in v ? v.value : v;
    out.headers[id] = { ok: true, dict };
  } catch (e) {
    out.headers[id] = { ok: false, error: e.message };
  }
}
if (input.tdmrep) {
  const ajv = new Ajv({ allErrors: true, strict: true });
  const validate = ajv.compile(JSON.parse(fs.readFileSync(input.tdmrep_schema, 'utf8')));
  out.tdmrep = input.tdmrep.map((doc) => ({ ok: validate(doc), errors: validate.errors || [] }));
}
const includedIn = 'http://www.w3.org/ns/odrl/2/includedIn';
for (const q of turtle(input.profile)) if (q.predicate.value === includedIn) out.includedIn.push([q.subject.value, q.object.value]);
process.stdout.write(JSON.stringify(out));

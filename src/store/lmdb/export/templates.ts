/**
 * Stored templates (issue 34) and their versions as transfer records. A store made before
 * templates has none of their databases: entriesOf reads an absent database as empty.
 */
import type { StoredTemplate, TemplateVersion } from '../../../domain/template.js';
import type { TransferRecords } from '../../port/transfer.js';
import { entriesOf, type ExportContext } from './context.js';

export function* templates(c: ExportContext): Generator<TransferRecords['templates']> {
  for (const { value } of entriesOf(c.dbs.templates)) yield { template: value as StoredTemplate };
}

export function* templateVersions(c: ExportContext): Generator<TransferRecords['templateVersions']> {
  for (const { key, value } of entriesOf(c.dbs.templateVersions)) yield { templateId: (key as [string, number])[0], version: value as TemplateVersion };
}

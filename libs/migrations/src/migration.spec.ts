import { createHash } from 'node:crypto';
import { checksumOf, defineMigration, parseMigrationFileName, splitStatements } from './migration';

describe('parseMigrationFileName', () => {
  it.each([
    ['001_events.sql', 1, '001_events'],
    ['clustered/002_aggregates.sql', 2, '002_aggregates'],
    ['0010_a_b.sql', 10, '0010_a_b'],
  ])('reads %s as version %d, name %s', (file, version, name) => {
    expect(parseMigrationFileName(file)).toEqual({ version, name });
  });

  it.each(['events.sql', '001-events.sql', '001_events.txt', '001_.sql'])('refuses %s', (file) => {
    expect(() => parseMigrationFileName(file)).toThrow(/<number>_<name>\.sql/);
  });
});

describe('splitStatements', () => {
  it('drops whole-line comments and splits at a semicolon that ends a line', () => {
    const sql = '-- why\nCREATE TABLE a (x int);\n\n-- and why\nINSERT INTO a VALUES (1); \nSELECT \';\' -- kept\n;\n';
    expect(splitStatements(sql)).toEqual(['CREATE TABLE a (x int)', 'INSERT INTO a VALUES (1)', "SELECT ';' -- kept"]);
  });

  it('finds nothing in a file of comments', () => {
    expect(splitStatements('-- only a note\n\n')).toEqual([]);
  });
});

describe('checksumOf', () => {
  it('is the sha256 of the statements, so a comment edit keeps it and a statement edit changes it', () => {
    expect(checksumOf(['a', 'b'])).toBe(createHash('sha256').update('a;\nb').digest('hex'));
    expect(checksumOf(splitStatements('-- one\nSELECT 1;'))).toBe(checksumOf(splitStatements('-- two\nSELECT 1;')));
    expect(checksumOf(splitStatements('SELECT 1;'))).not.toBe(checksumOf(splitStatements('SELECT  1;')));
  });
});

describe('defineMigration', () => {
  it('takes version and name from the file name and names the file it was given', () => {
    expect(defineMigration('003_x.sql', ['SELECT 1'], 'embedded/003_x.sql')).toEqual({
      version: 3,
      name: '003_x',
      file: 'embedded/003_x.sql',
      statements: ['SELECT 1'],
      checksum: checksumOf(['SELECT 1']),
    });
  });
});

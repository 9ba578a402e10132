// The columns of a published table as the engine has them (name and type, in table order):
// what agents and people are shown of the schema (the MCP door's resource), read from the
// engine so it can never drift from the migrations.
import type { Warehouse } from '../../../warehouse/warehouse.ts';

export interface TableColumn {
  name: string;
  type: string;
}

export async function tableColumns(wh: Warehouse, table: string): Promise<TableColumn[]> {
  return wh.query<TableColumn>('SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = {table:String} ORDER BY position', {
    params: { table },
  });
}
